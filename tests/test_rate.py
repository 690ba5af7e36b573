"""inkground rate without a browser: assignment rules, input validation, the ratings file (append-only,
several writers, crash), and the HTTP app (path traversal, access token, Host check, XSRF, name binding,
restart)."""
import http.client
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pandas as pd
import pytest

from inkground_lib.rate.assign import (
    Ledger,
    RateError,
    check_name,
    check_page_id,
    check_score,
)
from inkground_lib.core.run_loaders import RunError, load_pseudo_run
from inkground_lib.rate.server import Server
from inkground_lib.rate.session import open_session, session_hash
from inkground_lib.core.dataset import dataset_hash
from inkground_lib.core.files import atomic_write_json
from inkground_lib.core.folders import RUN_MARK
from inkground_lib.pseudo.raters import LOG_COLUMNS, RatingsError, read_ratings
from inkground_lib.pseudo.ratings_log import RatingsLog

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------------------- a run folder

def make_run(tmp: Path, pages: int = 4, words: int = 2) -> tuple[Path, Path]:
    """A small pseudo-label run folder as section 02 leaves it (summary, pages, words, derender cache, run
    mark) over a hand-made dataset; pseudo-labels = the reference inks. Page p001 failed the OCR filter."""
    from conftest import make_tiny_dataset

    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.core.ink import ink_to_lists

    ds_dir = make_tiny_dataset(tmp / "ds", pages=pages, words=words)
    ds = load_dataset(ds_dir)
    run = tmp / "run"
    run.mkdir()
    atomic_write_json(run / RUN_MARK, {"inkground": "run folder", "created_by": "pseudo"})
    atomic_write_json(run / "summary.json", {
        "params": {"candidates": str(ds_dir), "run_dir": str(run), "derenderer": "skeleton"},
        "components": {"derenderer": "skeleton", "ocr_engine": "rapidocr", "ratings_source": "simulated"},
        "candidates_hash": dataset_hash(ds_dir)})
    pd.DataFrame({"page": [p.id for p in ds.pages], "ocr_pass": [p.id != "p001" for p in ds.pages]}).to_csv(
        run / "pages.csv", index=False)
    pd.DataFrame([{"page": p.id, "word_id": w.id, "strokes": len(w.ink), "points": w.ink.n_points}
                  for p in ds.pages for w in p.words]).to_csv(run / "words.csv", index=False)
    with open(run / "derender-skeleton.jsonl", "w") as f:
        for p in ds.pages:
            f.write(json.dumps({"schema": "inkground-pseudo-derender", "key": p.id, "page": p.id,
                                "words": {w.id: ink_to_lists(w.ink) for w in p.words}}) + "\n")
    (tmp / "ratings").mkdir()
    return run, ds_dir


@pytest.fixture
def run_dir(tmp_path):
    return make_run(tmp_path)[0]


# ----------------------------------------------------------------------------------------- assignment

def rate(L: Ledger, page, rater, score=10, session="s"):
    L.check_rating(page, rater, now=0)
    L.apply({"page": page, "rater": rater, "score": score, "session": session})


def active(L: Ledger, *raters):
    """Raters who have rated before (a rating of a page outside this session, undone): their reservations hold."""
    for r in raters:
        L.apply({"page": "elsewhere", "rater": r, "score": 10, "session": r})
        L.apply({"page": "elsewhere", "rater": r, "score": 10, "session": r, "action": "undo"})


def test_next_page_fewest_ratings_never_more_than_k_never_twice():
    L = Ledger(["a", "b", "c"], k=2, reserve_s=100)
    active(L, *[f"r{i}" for i in range(1, 10)])
    assert L.next_page("r1", now=0) == "a"
    assert L.next_page("r1", now=1) == "a"  # the reservation is kept (a reload shows the same page)
    assert L.next_page("r2", now=1) == "b"  # same ratings (0): the page fewer others are looking at
    assert L.next_page("r3", now=1) == "c"
    assert L.next_page("r4", now=1) == "a"  # one free slot left beside r1's reservation
    assert L.next_page("r5", now=1) == "b"
    assert L.next_page("r6", now=1) == "c"
    assert L.next_page("r7", now=1) is None  # every slot is reserved: no page may get a third rating
    with pytest.raises(RateError, match="reserved"):
        L.check_rating("a", "r7", now=1)
    rate(L, "a", "r1")
    assert L.next_page("r1", now=2) is None  # b and c are fully reserved; r1 never sees a again
    rate(L, "a", "r4")
    with pytest.raises(RateError, match="already has its 2 ratings"):
        L.check_rating("a", "r7", now=2)
    with pytest.raises(RateError, match="already rated"):
        L.check_rating("a", "r1", now=2)
    # reservations expire: r2's hold on b lapses and r1 can take b
    assert L.next_page("r1", now=500) == "b"
    for r in ("r1", "r2", "r3", "r4"):
        while (p := L.next_page(r, now=600)) is not None:
            rate(L, p, r)
    assert all(len(L.ratings[p]) == 2 for p in "abc")
    assert L.next_page("r9", now=700) is None


def test_undo_returns_the_last_page_to_its_rater():
    L = Ledger(["a", "b"], k=1)
    rate(L, "a", "r1")
    rate(L, "b", "r1")
    assert L.last_rated("r1") == "b"
    L.apply({"page": "b", "rater": "r1", "score": 10, "action": "undo"})
    assert L.last_rated("r1") == "a" and "r1" not in L.ratings["b"]
    assert L.next_page("r1", now=0) == "b"
    assert L.progress("r1") == {"pages": 2, "k": 1, "ratings_needed": 2, "ratings_given": 1,
                                "pages_complete": 1, "done": 1, "remaining": 1}


def test_name_bound_to_first_session_case_insensitive():
    L = Ledger(["a"], k=1)
    assert L.bind("Ann", "s1") == "Ann"
    assert L.bind("ann", "s1") == "Ann"  # the same session: the name as first typed
    for name in ("Ann", "ANN"):
        with pytest.raises(RateError, match="another browser session") as e:
            L.bind(name, "s2")
        assert e.value.status == 409


@pytest.mark.parametrize("bad", [True, 7.5, "7.5", "11", -1, "ten", None, "", [10]])
def test_score_validation(bad):
    with pytest.raises(RateError, match="score"):
        check_score(bad)


def test_good_scores():
    assert [check_score(v) for v in (0, "7", 10, "10")] == [0, 7, 10, 10]


@pytest.mark.parametrize("bad", ["", " ann", "a b", "../x", "a/b", "x" * 33, "é", "<b>", "ann\n", 5])
def test_rater_name_validation(bad):
    with pytest.raises(RateError, match="not a valid rater name"):
        check_name(bad)


@pytest.mark.parametrize("bad", ["../x", "a/b", "", "p\x00", ".hidden", "x" * 200])
def test_page_id_validation(bad):
    with pytest.raises(RateError, match="not a valid id"):
        check_page_id(bad)


# ----------------------------------------------------------------------------------------- ratings file

def row(page, rater, score=10, action="rate", session="s1", k=2):
    return {"page": page, "rater": rater, "score": score, "action": action, "session": session,
            "raters_per_page": k}


def test_log_writes_header_and_rows_read_by_section_02(tmp_path):
    f = tmp_path / "r.csv"
    log = RatingsLog(f)
    log.append(row("p1", "ann", 10))
    log.append(row("p1", "bob", 7))
    log.append(row("p1", "bob", 7, action="undo"))
    log.append(row("p1", "bob", 9))
    lines = f.read_text().splitlines()
    assert lines[0] == ",".join(LOG_COLUMNS) and len(lines) == 5
    assert re.fullmatch(r"p1,ann,10,real,\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ,rate,s1,2", lines[1])
    df = read_ratings(f)
    assert list(df.columns) == ["page", "rater", "score", "source", "time"]
    assert sorted(zip(df["rater"], df["score"])) == [("ann", 10), ("bob", 9)]
    assert set(df["source"]) == {"real"}
    with pytest.raises(RatingsError, match="already rated"):
        log.append(row("p1", "ann", 3))
    with pytest.raises(RatingsError, match="undo of a rating"):
        log.append(row("p2", "ann", 3, action="undo"))
    with pytest.raises(RatingsError, match="not a valid rater name"):
        log.append(row("p2", "a,b", 3))
    assert len(f.read_text().splitlines()) == 5  # refused rows are not written


def test_log_refuses_a_plain_ratings_file(tmp_path):
    f = tmp_path / "old.csv"
    f.write_text("page,rater,score\np1,a,10\n")
    with pytest.raises(RatingsError, match="not that of a file written by inkground rate"):
        RatingsLog(f)
    assert f.read_text() == "page,rater,score\np1,a,10\n"
    assert len(read_ratings(f)) == 1  # still read by section 02


def test_read_ratings_undo_errors_name_line(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text(",".join(LOG_COLUMNS) + "\np1,ann,10,real,t,rate,s,2\np2,ann,10,real,t,undo,s,2\n")
    with pytest.raises(RatingsError, match=r"r.csv: line 3: field action: undo"):
        read_ratings(f)
    f.write_text(",".join(LOG_COLUMNS) + "\np1,ann,10,real,t,redo,s,2\n")
    with pytest.raises(RatingsError, match=r"line 2: field action"):
        read_ratings(f)


WRITER = """
import sys
from inkground_lib.pseudo.ratings_log import RatingsLog
log = RatingsLog(sys.argv[1])
who, n = sys.argv[2], int(sys.argv[3])
for i in range(n):
    log.append({"page": f"p{i:04d}", "rater": who, "score": i % 11, "action": "rate", "session": who,
                "raters_per_page": 9})
    print(i, flush=True)
"""


@pytest.mark.slow  # processes
def test_several_processes_and_threads_append_without_loss(tmp_path):
    f = tmp_path / "r.csv"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(f), f"proc{i}", "60"], stdout=subprocess.DEVNULL)
             for i in range(3)]
    log = RatingsLog(f)
    seen = []
    log.on_event = lambda r, line: seen.append((r["page"], r["rater"]))

    def work(t):
        for i in range(40):
            log.append(row(f"p{i:04d}", f"thread{t}", i % 11, k=9))
    threads = [threading.Thread(target=work, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        assert p.wait(60) == 0
    df = read_ratings(f)
    assert len(df) == 3 * 60 + 3 * 40
    assert df.groupby("rater").size().to_dict() == {**{f"proc{i}": 60 for i in range(3)},
                                                    **{f"thread{i}": 40 for i in range(3)}}
    log.refresh()
    assert len(seen) == len(df)  # every row, own and others', seen once by the writer's ledger callback
    assert all(len(line.split(",")) == len(LOG_COLUMNS) for line in f.read_text().splitlines())


@pytest.mark.slow  # kill -9
def test_killed_writer_loses_no_confirmed_rating(tmp_path):
    f = tmp_path / "r.csv"
    p = subprocess.Popen([sys.executable, "-c", WRITER, str(f), "ann", "100000"], stdout=subprocess.PIPE, text=True)
    confirmed = -1
    for line in p.stdout:
        confirmed = int(line)
        if confirmed >= 30:
            break
    os.kill(p.pid, signal.SIGKILL)
    p.wait(10)
    df = read_ratings(f)
    assert len(df) >= confirmed + 1  # every rating whose append returned is on disk
    RatingsLog(f).append(row("zz", "bob", 10, k=9))  # and the file takes more rows
    assert len(read_ratings(f)) == len(df) + 1


def test_torn_last_line_is_cut_not_confirmed(tmp_path):
    f = tmp_path / "r.csv"
    good = ",".join(LOG_COLUMNS) + "\np1,ann,10,real,2026-11-30T10:00:00Z,rate,s,2\n"
    f.write_text(good + "p2,ann,1")  # a crash in the middle of a write
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert len(read_ratings(f)) == 1
    assert any("incomplete last row" in str(x.message) for x in w)
    log = RatingsLog(f)
    assert "cut off an incomplete last row" in log.repaired
    assert f.read_text() == good
    f.write_text(good + "p2,ann,9,real,2026-11-30T10:00:01Z,rate,s,2")  # complete but its newline was lost
    log = RatingsLog(f)
    assert "missing newline" in log.repaired
    log.append(row("p3", "ann", 5))
    assert sorted(read_ratings(f)["page"]) == ["p1", "p2", "p3"]


# ----------------------------------------------------------------------------------------- run folder

def test_refuses_folders_that_are_not_pseudo_label_runs(tmp_path, run_dir):
    with pytest.raises(RunError, match="not a folder"):
        load_pseudo_run(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunError, match="summary.json is missing"):
        load_pseudo_run(tmp_path / "empty")
    other = tmp_path / "evalrun"
    other.mkdir()
    atomic_write_json(other / RUN_MARK, {"created_by": "eval"})
    with pytest.raises(RunError, match="inkground eval"):
        load_pseudo_run(other)
    r = load_pseudo_run(run_dir)
    assert r.offered == ["p000", "p002", "p003"] and len(r.all_pages) == 4
    assert load_pseudo_run(run_dir, pages="all").offered == ["p000", "p001", "p002", "p003"]
    (r.candidates / "pages" / "p000.jpg").write_bytes((r.candidates / "pages" / "p002.jpg").read_bytes() + b"x")
    with pytest.raises(RunError, match="changed since the run"):
        load_pseudo_run(run_dir)


def test_ratings_file_must_be_outside_run_and_dataset(tmp_path, run_dir):
    for bad in (run_dir / "ratings.csv", tmp_path / "ds" / "r.csv", run_dir / "benchmark" / "r.csv"):
        (bad.parent).mkdir(exist_ok=True)
        with pytest.raises(RateError, match="inside"):
            open_session(run_dir, bad, 2)
        assert not bad.exists()
    with pytest.raises(RateError, match="does not exist"):
        open_session(run_dir, tmp_path / "nofolder" / "r.csv", 2)


def test_k_is_fixed_per_ratings_file_and_pages_must_belong(tmp_path, run_dir):
    f = tmp_path / "ratings" / "r.csv"
    s = open_session(run_dir, f, 2)
    s.log.append(row("p000", "ann", 10, k=2))
    with pytest.raises(RateError, match="collected with 2 raters per page"):
        open_session(run_dir, f, 3)
    assert open_session(run_dir, f).ledger.k == 2  # K taken from the file
    RatingsLog(f).append(row("elsewhere", "ann", 10, k=2))
    with pytest.raises(RateError, match="not pages of the run"):
        open_session(run_dir, f, 2)


# ----------------------------------------------------------------------------------------- HTTP

class Client:
    """A browser-like HTTP client: keeps cookies, sends the XSRF header; raw paths (no normalisation)."""

    def __init__(self, port, host_header=None):
        self.port, self.cookies, self.host_header = port, {}, host_header

    def req(self, method, path, body=None, headers=None, xsrf=True):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        h = dict(headers or {})
        if self.host_header:
            h["Host"] = self.host_header
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if body is not None:
            body = json.dumps(body) if not isinstance(body, (bytes, str)) else body
            h["Content-Type"] = "application/json"
            if xsrf and "_xsrf" in self.cookies:
                h["X-XSRFToken"] = self.cookies["_xsrf"]
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        for k, v in r.getheaders():
            if k.lower() == "set-cookie":
                name, _, rest = v.partition("=")
                self.cookies[name] = rest.split(";")[0]
        c.close()
        return r.status, data, dict(r.getheaders())

    def json(self, method, path, body=None, **kw):
        st, data, _ = self.req(method, path, body, **kw)
        return st, json.loads(data)

    def login(self, name):
        self.req("GET", "/")  # the XSRF cookie
        return self.json("POST", "/api/login", {"name": name})


@pytest.fixture
def server(tmp_path, run_dir):
    f = tmp_path / "ratings" / "r.csv"
    srv = Server(open_session(run_dir, f, 2), "127.0.0.1", 0).start()
    yield srv
    srv.stop()


def test_path_traversal_is_refused(server, tmp_path):
    c = Client(server.port)
    secret = (ROOT / "inkground_lib" / "rate" / "server.py").read_bytes()[:60]
    for path in ["/static/../server.py", "/static/%2e%2e/server.py", "/static/..%2fserver.py",
                 "/static/../../../../etc/passwd", "/static/%2e%2e/%2e%2e/assign.py", "/photo/..%2fmanifest.json",
                 "/photo/../../etc/passwd", "/photo/%2e%2e", "/photo/p000%2f..%2f..%2fmanifest.json",
                 "/static//etc/passwd", "/../../etc/passwd"]:
        st, data, _ = c.req("GET", path)
        assert st in (400, 403, 404), (path, st)
        assert secret not in data and b"root:" not in data and b'"schema"' not in data, path
    st, data, h = c.req("GET", "/photo/p000")
    assert st == 200 and h["Content-Type"] == "image/jpeg" and data[:2] == b"\xff\xd8"
    assert c.req("GET", "/photo/p999")[0] == 404
    assert c.req("GET", "/static/app.js")[0] == 200


def test_host_header_must_name_the_server(server):
    assert Client(server.port, host_header=f"evil.example:{server.port}").req("GET", "/")[0] == 421
    assert Client(server.port, host_header=f"localhost:{server.port}").req("GET", "/")[0] == 200


def test_rating_flow_validation_binding_and_restart(server, tmp_path, run_dir):
    a, b = Client(server.port), Client(server.port)
    st, s = a.login("ann")
    assert st == 200 and s["rater"] == "ann" and s["page"]["id"] == "p000"
    assert s["page"]["words"][0]["svg"].startswith("<svg") and s["page"]["words"][0]["strokes"]
    assert b.login("ANN")[0] == 409  # bound to a's session
    st, _ = b.login("bob")
    assert st == 200
    page = s["page"]["id"]
    for bad, code in [({"page": page, "score": 11}, 400), ({"page": page, "score": "7.5"}, 400),
                      ({"page": page, "score": True}, 400), ({"page": "../x", "score": 5}, 400),
                      ({"page": "p001", "score": 5}, 404),  # failed the OCR filter: not offered
                      ({"page": page, "score": 5, "extra": 1}, 400), ("not json", 400), ([1, 2], 400)]:
        st, out = a.json("POST", "/api/rate", bad)
        assert st == code and out["error"], bad
    assert a.req("POST", "/api/rate", {"page": page, "score": 5}, xsrf=False)[0] == 403  # XSRF
    assert Client(server.port).json("POST", "/api/rate", {"page": page, "score": 5}, xsrf=False)[0] == 403
    st, s = a.json("POST", "/api/rate", {"page": page, "score": 10})
    assert st == 200 and s["progress"]["done"] == 1 and s["page"]["id"] != page
    st, again = a.json("POST", "/api/rate", {"page": page, "score": 3})
    assert st == 409 and "already rated" in again["error"]
    st, s = a.json("POST", "/api/undo", {})
    assert st == 200 and s["page"]["id"] == page and s["progress"]["done"] == 0
    st, s = a.json("POST", "/api/rate", {"page": page, "score": 9})
    assert st == 200
    nxt = s["page"]["id"]
    st, stats = a.json("GET", "/api/stats")
    assert stats["used"]["ratings"] == 1 and stats["raters"][0]["rater"] == "ann" and stats["other"] is None
    assert b"ann" in a.req("GET", "/stats")[1]
    # restart: a new server over the same file; a's cookie still names ann, b still cannot take ann
    server.stop()
    srv2 = Server(open_session(run_dir, tmp_path / "ratings" / "r.csv", 2), "127.0.0.1", 0).start()
    try:
        a.port = b.port = srv2.port
        st, s = a.json("GET", "/api/state")
        # reservations are not kept over a restart: a page ann has not rated, with the fewest ratings
        assert s["rater"] == "ann" and s["progress"]["done"] == 1 and s["page"]["id"] not in (page, nxt)
        assert b.login("ann")[0] == 409
    finally:
        srv2.stop()
    df = read_ratings(tmp_path / "ratings" / "r.csv")
    assert df[["page", "rater", "score"]].values.tolist() == [[page, "ann", 9]]
    raw = (tmp_path / "ratings" / "r.csv").read_text()
    assert raw.count(",undo,") == 1 and session_hash(a.cookies["inkground_session"]) in raw
    assert a.cookies["inkground_session"] not in raw  # the cookie itself is never stored


def test_access_token_off_loopback(tmp_path, run_dir, caplog):
    caplog.set_level(logging.INFO, logger="inkground.rate")
    token = "T0ken-for-test-123456"
    s = open_session(run_dir, tmp_path / "ratings" / "r.csv", 2, token=token)
    srv = Server(s, "127.0.0.1", 0).start()
    try:
        c = Client(srv.port)
        for path in ("/", "/api/state", "/photo/p000", "/static/app.js", "/stats"):
            st, data, _ = c.req("GET", path)
            assert st == 403 and b"access token required" in data, path
        assert c.req("GET", "/?token=wrong")[0] == 403
        st, _, h = c.req("GET", "/?token=" + token)
        assert st == 302 and h["Location"] == "/" and c.cookies["inkground_access"] == token
        assert c.req("GET", "/photo/p000")[0] == 200
        assert c.login("ann")[0] == 200
        assert Client(srv.port).req("GET", "/api/state", headers={"X-Inkground-Token": token})[0] == 200
    finally:
        srv.stop()
    assert caplog.records and not any(token in r.getMessage() for r in caplog.records)


def test_cli_refuses_bad_input(tmp_path, run_dir, capsys):
    from inkground_lib.cli import main

    assert main(["rate", "--run", str(tmp_path / "nope"), "--ratings", str(tmp_path / "r.csv")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["rate", "--run", str(run_dir), "--ratings", str(run_dir / "r.csv")]) == 2
    assert "inside" in capsys.readouterr().err
    assert main(["rate", "--run", str(run_dir), "--ratings", str(tmp_path / "r.csv"), "--raters-per-pair", "0"]) == 2
    assert not (tmp_path / "r.csv").exists() and not (run_dir / "r.csv").exists()


def test_access_token_from_environment_or_random(monkeypatch):
    from inkground_lib.rate.server import TOKEN_ENV, access_token

    monkeypatch.delenv(TOKEN_ENV, raising=False)
    a, b = access_token(), access_token()
    assert a != b and len(a) >= 32
    monkeypatch.setenv(TOKEN_ENV, "a-fixed-token-for-the-lab")
    assert access_token() == "a-fixed-token-for-the-lab"
    monkeypatch.setenv(TOKEN_ENV, "short")
    with pytest.raises(RateError, match="16-128 characters") as e:
        access_token()
    assert "short" not in str(e.value)


# ----------------------------------------------------------------------------------------- misuse (issue 28)

def test_logins_that_never_rate_cannot_lock_a_rater_out():
    """200 scripted logins each take a page and never rate: a real rater is still offered a page and can rate
    it; their reservations expire after reserve_s and are not renewed; a rater who rates keeps theirs while
    looking, up to max_hold_s."""
    L = Ledger([f"p{i}" for i in range(24)], k=2, reserve_s=300, max_hold_s=1800)
    for i in range(200):
        L.bind(f"bot{i}", f"s{i}")
        L.next_page(f"bot{i}", now=0)
    assert all(L._reserved_by_others(p, "ann", 1) >= 2 for p in L.pages)  # every slot is held by bots
    page = L.next_page("ann", now=1)
    assert page is not None
    rate(L, page, "ann")  # the bots' reservations never refuse a rating
    assert L.next_page("ann", now=2) not in (None, page)
    # a bot's reservation is not renewed by reloading: it lapses reserve_s after the offer
    first = L.reservations["bot0"][0]
    L.next_page("bot0", now=299)
    assert L.reservations["bot0"][1] == 300
    # ann (who rated) keeps her page while she looks at it, but not for ever
    held = L.reservations["ann"][0]
    for t in range(2, 1800, 200):
        assert L.next_page("ann", now=t) == held
    assert L.reservations["ann"][1] <= 2 + 1800
    assert first  # (the page bot0 was offered)


def test_one_reservation_per_browser_session():
    L = Ledger(["a", "b"], k=1, reserve_s=100)
    L.bind("ann", "s1")
    assert L.next_page("ann", now=0) == "a"
    L.bind("bob", "s1")  # the same browser logs in as someone else: ann's page is released
    assert "ann" not in L.reservations
    assert L.next_page("bob", now=1) == "a"


def test_xsrf_needs_the_header_on_every_post(server):
    """A cross-origin page can put _xsrf in a query or a text/plain body and can set the _xsrf cookie (cookies
    ignore ports), but it cannot send a custom header: only the header is accepted."""
    a = Client(server.port)
    assert a.login("ann")[0] == 200
    page = a.json("GET", "/api/state")[1]["page"]["id"]
    token = a.cookies["_xsrf"]
    forged = Client(server.port)
    forged.cookies = {**a.cookies, "_xsrf": token}
    for path in ("/api/rate", "/api/undo", "/api/login", "/api/logout"):
        st, data, _ = forged.req("POST", f"{path}?_xsrf={token}", body=json.dumps({"page": page, "score": 5}),
                                 headers={"Content-Type": "text/plain"}, xsrf=False)
        assert st == 403, path
        assert b"X-XSRFToken" in data
    # an invented cookie with the same invented value in the query: refused too
    bob = Client(server.port)
    bob.cookies = {"_xsrf": "2|00000000|00000000000000000000000000000000|1"}
    assert bob.req("POST", "/api/login?_xsrf=2|00000000|00000000000000000000000000000000|1",
                   body='{"name": "mallory"}', xsrf=False)[0] == 403
    # the header, but another origin named by the browser
    for h in ({"Origin": "http://127.0.0.1:1"}, {"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Site": "cross-site"}):
        assert a.req("POST", "/api/rate", {"page": page, "score": 5}, headers=h)[0] == 403, h
    # the header, but another token than the cookie's
    assert a.req("POST", "/api/rate", {"page": page, "score": 5}, headers={"X-XSRFToken": "2|0|0|0"},
                 xsrf=False)[0] == 403
    assert read_ratings_or_empty(server) == 0
    st, _ = a.json("POST", "/api/rate", {"page": page, "score": 5},
                   headers={"Origin": f"http://127.0.0.1:{server.port}", "Sec-Fetch-Site": "same-origin"})
    assert st == 200 and read_ratings_or_empty(server) == 1


def read_ratings_or_empty(server) -> int:
    return len(read_ratings(server.session.ratings_path))


@pytest.mark.parametrize("body", [
    '{"page": "p000", "score": ' + "1" + "0" * 400 + "}",  # 10**400 as a JSON integer
    '{"page": "p000", "score": 1e400}', '{"page": "p000", "score": -1e400}', '{"page": "p000", "score": NaN}',
    '{"page": "p000", "score": Infinity}', '{"page": "p000", "score": "' + "9" * 5000 + '"}',
    '{"page": "p000", "score": ' + "9" * 5000 + "}",  # over Python's limit on an integer's digits
    '{"page": "p000", "score": 10.0000000000000001}', '{"page": "p000", "score": "1e1"}',
    '{"page": "p000", "score": "\\u0000"}', '{"page": "p000\\u0000", "score": 5}', '{"page": {"a": 1}, "score": 5}',
    "[" * 5000 + "]" * 5000, '{"page": "p000", "score": 5', b'\xff\xfe{"page": 1}', "",
])
def test_bad_bodies_are_4xx_never_500(server, body):
    a = Client(server.port)
    assert a.login("ann")[0] == 200
    st, data, _ = a.req("POST", "/api/rate", body=body)
    assert 400 <= st < 500, (st, data[:200])
    assert b"Traceback" not in data and "error" in json.loads(data)
    assert read_ratings_or_empty(server) == 0


@pytest.mark.parametrize("path", [
    "/static/app.js%00.png", "/static/%00", "/static/app.js%00", "/static/app.css/..", "/static/APP.JS",
    "/static/app.js/", "/static/%ff%fe", "/static/" + "a" * 3000, "/static/.", "/static/..", "/static/",
    "/photo/%00", "/photo/p000%00.jpg", "/photo/%ff", "/photo/" + "p" * 3000, "/api/%00", "/stats%00",
    "/%00", "/api/state%00", "/photo/p000?x=%00", "/static/app.js?v=%00%ff",
])
def test_odd_paths_are_4xx_never_500(server, path):
    st, data, _ = Client(server.port).req("GET", path)
    assert 400 <= st < 500 or (st == 200 and path.startswith(("/photo/p000?", "/static/app.js?"))), (path, st)
    assert b"Traceback" not in data


def test_a_moved_ratings_file_is_an_error_shown_to_the_rater_never_a_new_file(server, tmp_path):
    f = server.session.ratings_path
    a = Client(server.port)
    st, s = a.login("ann")
    st, s = a.json("POST", "/api/rate", {"page": s["page"]["id"], "score": 10})
    assert st == 200
    moved = tmp_path / "moved.csv"
    f.rename(moved)
    st, out = a.json("POST", "/api/rate", {"page": s["page"]["id"], "score": 10})
    assert st == 503 and "is gone (moved or deleted)" in out["error"] and "nothing was saved" in out["error"]
    assert not f.exists()  # never a new file without its header
    assert a.json("GET", "/api/state")[0] == 503
    assert Client(server.port).req("GET", "/stats")[0] == 503
    f.write_text(moved.read_text())  # another file at the old path (a copy): refused as well, it is not the one opened
    st, out = a.json("POST", "/api/rate", {"page": s["page"]["id"], "score": 10})
    assert st == 503 and "replaced by another file" in out["error"]
    f.unlink()
    moved.rename(f)  # put back: rating goes on
    st, out = a.json("POST", "/api/rate", {"page": s["page"]["id"], "score": 10})
    assert st == 200 and len(read_ratings(f)) == 2


def test_port_in_use_is_one_line_naming_the_port_and_the_option(tmp_path, run_dir, capsys):
    import socket

    from inkground_lib.cli import main

    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    port = blocker.getsockname()[1]
    try:
        code = main(["rate", "--run", str(run_dir), "--ratings", str(tmp_path / "ratings" / "r.csv"),
                     "--port", str(port)])
    finally:
        blocker.close()
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"port {port}" in err and "already in use" in err and "--port" in err


def test_done_screen_fits_the_raters_state(tmp_path, run_dir):
    """Pages left but held by a rater who rates: "waiting"; nothing rated and nothing left: no thanks, nothing
    to undo; rated and nothing left: thanks."""
    f = tmp_path / "ratings" / "r.csv"
    srv = Server(open_session(run_dir, f, 1), "127.0.0.1", 0).start()  # K = 1: three pages offered
    try:
        ann, cid = Client(srv.port), Client(srv.port)
        st, s = ann.login("ann")
        for _ in range(2):
            st, s = ann.json("POST", "/api/rate", {"page": s["page"]["id"], "score": 10})
        assert s["page"] is not None  # ann looks at the last page now
        st, s = cid.login("cid")
        assert s["page"] is None and s["done"]["reason"] == "waiting" and "1 page still needs" in s["done"]["text"]
        assert "Thank" not in s["done"]["text"] and s["can_undo"] is False
        ann.json("POST", "/api/rate", {"page": s_page(ann), "score": 7})
        st, s = cid.json("GET", "/api/state")
        assert s["done"]["reason"] == "none" and "You have not rated a page yet" in s["done"]["text"]
        assert "Thank" not in s["done"]["text"] and s["can_undo"] is False
        st, out = cid.json("POST", "/api/undo", {})
        assert st == 409 and "nothing to undo" in out["error"]
        st, s = ann.json("GET", "/api/state")
        assert s["done"]["reason"] == "finished" and "You rated 3 pages" in s["done"]["text"]
        assert "Thank you" in s["done"]["text"] and s["can_undo"] is True
    finally:
        srv.stop()


def s_page(c: Client) -> str:
    return c.json("GET", "/api/state")[1]["page"]["id"]


def test_stats_are_section_02s_over_section_02s_pages(tmp_path, run_dir):
    """With --pages all, /stats gives the OCR-passed pages' figures (those section 02 uses, by its own
    function) first and the OCR-failed page's apart; checked against a hand computation from the CSV."""
    import csv

    f = tmp_path / "ratings" / "r.csv"
    srv = Server(open_session(run_dir, f, 2, pages="all"), "127.0.0.1", 0).start()
    try:
        given = {("p000", "ann"): 10, ("p000", "bob"): 10, ("p001", "ann"): 10, ("p001", "bob"): 10,
                 ("p002", "ann"): 10, ("p002", "bob"): 4, ("p003", "ann"): 10}
        for (page, rater), score in given.items():
            srv.session.log.append(row(page, rater, score))
        c = Client(srv.port)
        st, js = c.json("GET", "/api/stats")
        html = c.req("GET", "/stats")[1].decode()
    finally:
        srv.stop()
    # by hand from the CSV: section 02's pages are p000, p002, p003 (p001 failed the OCR filter); K = 2
    rows = list(csv.DictReader(open(f)))
    by = {}
    for r in rows:
        by.setdefault(r["page"], []).append(int(r["score"]))
    used = ["p000", "p002", "p003"]
    kept = [p for p in used if len(by.get(p, [])) >= 2 and min(by[p]) == 10]
    multi = [p for p in used if len(by.get(p, [])) >= 2]
    agree = sum(len({s == 10 for s in by[p]}) == 1 for p in multi) / len(multi)
    u = js["used"]
    assert u["pages"] == used and (u["kept"], u["rejected"], u["awaiting"]) == (len(kept), 1, 1) == (1, 1, 1)
    assert u["agreement"] == agree == 0.5 and u["ratings"] == 5
    assert js["other"]["pages"] == ["p001"] and js["other"]["kept"] == 1 and js["other"]["ratings"] == 2
    assert html.index("The pages section 02 uses") < html.index("Other pages offered here")
    assert 'id="used-list">p000, p002, p003<' in html and "passed the OCR" in html


# ---- issue 33: the ratings file reader holds rows to the app's rules

def test_rater_names_equal_after_normalisation_are_one_rater(tmp_path):
    from inkground_lib.pseudo.raters import RatingsError, load_ratings, rater_key

    assert rater_key("zoe\u0308") == rater_key("zo\u00eb") == rater_key("ZO\u00cb")
    f = tmp_path / "r.csv"
    f.write_text("page,rater,score\np1,Ann,10\np1,ann,10\n", "utf-8")
    with pytest.raises(RatingsError, match=r"r\.csv: line 3: field rater: rater 'ann' already rated page 'p1' "
                                           r"\(line 2\) \(as 'Ann'"):
        load_ratings(f)
    # a name outside the app's rule (combining marks, non-ASCII letters) is refused, NFC or NFD alike
    for name in ("zo\u00eb", "zoe\u0308"):
        f.write_text(f"page,rater,score\np1,{name},10\n", "utf-8")
        with pytest.raises(RatingsError, match=r"line 2: field rater: .* is not a valid rater name \(1-32"):
            load_ratings(f)


def test_a_10kb_rater_name_is_refused_by_the_apps_rule(tmp_path):
    from inkground_lib.pseudo.raters import RatingsError, load_ratings

    f = tmp_path / "r.csv"
    f.write_text("page,rater,score\np1," + "a" * 10_000 + ",10\n", "utf-8")
    with pytest.raises(RatingsError, match=r"r\.csv: line 2: field rater: 'a+.* is not a valid rater name"):
        load_ratings(f)
    f.write_text("page,rater,score\np1," + "a" * 32 + ",10\n", "utf-8")
    assert load_ratings(f).ratings["rater"].tolist() == ["a" * 32]


def test_a_rating_of_a_page_outside_the_run_is_refused_with_its_line(tmp_path):
    from inkground_lib.pseudo.raters import RatingsError, check_rating_pages, load_ratings

    f = tmp_path / "r.csv"
    f.write_text("page,rater,score\np1,a,10\np1,b,10\nelsewhere,a,10\n", "utf-8")
    rf = load_ratings(f)
    check_rating_pages(rf, ["p1", "elsewhere"])
    with pytest.raises(RatingsError, match=r"r\.csv: line 4: field page: 'elsewhere' is not a page of this run"):
        check_rating_pages(rf, ["p1", "p2"])


def test_a_session_cookie_planted_before_login_names_nobody(server):
    """Issue 44 (session fixation): on ed2f909 the app kept a session cookie the client chose at login, so
    whoever planted it in a rater's browser could rate under their name. Now every login issues a new id."""
    planted = "attacker-chosen-session-id-0123456789"
    victim = Client(server.port)
    victim.cookies["inkground_session"] = planted
    st, s = victim.login("vic")
    assert st == 200 and s["rater"] == "vic"
    assert victim.cookies["inkground_session"] != planted  # rotated: the app's own id
    attacker = Client(server.port)
    attacker.req("GET", "/")
    attacker.cookies["inkground_session"] = planted
    st, s = attacker.json("GET", "/api/state")
    assert st == 200 and s["rater"] is None
    page = victim.json("GET", "/api/state")[1]["page"]["id"]
    st, out = attacker.json("POST", "/api/rate", {"page": page, "score": 0})
    assert st == 401 and "no rater" in out["error"]
    assert attacker.login("vic")[0] == 409  # the name stays the victim's browser's
    # the other guarantees hold: the same browser logs in again (rotated again), keeps its name and ratings
    first = victim.cookies["inkground_session"]
    assert victim.json("POST", "/api/rate", {"page": page, "score": 7})[0] == 200
    assert victim.json("POST", "/api/logout", {})[0] == 200
    st, s = victim.login("vic")
    assert st == 200 and s["progress"]["done"] == 1 and victim.cookies["inkground_session"] != first
    old = Client(server.port)
    old.req("GET", "/")
    old.cookies["inkground_session"] = first  # the id before the rotation names nobody now
    assert old.json("GET", "/api/state")[1]["rater"] is None and old.login("vic")[0] == 409


def test_a_rater_who_logged_in_again_since_rating_continues_after_a_restart(server, tmp_path, run_dir):
    """The rotation at login kept its guarantees: the ratings file names a name's holder by the session of its
    latest rating; a rater who logged out and in again since (a new session id) was refused their own name in
    their own browser after a restart (409). The browser keeps that rating's session in a second cookie; it
    continues under a new id again, and a session id planted beside it names nobody."""
    a = Client(server.port)
    page = a.login("ann")[1]["page"]["id"]
    assert a.json("POST", "/api/rate", {"page": page, "score": 10})[0] == 200
    assert a.json("POST", "/api/logout", {})[0] == 200
    assert a.login("ann")[0] == 200  # rotated: the file still names the session of the rating
    rated = session_hash(a.cookies["inkground_rated"])
    assert rated != session_hash(a.cookies["inkground_session"]) and rated in (tmp_path / "ratings" / "r.csv").read_text()
    server.stop()
    srv2 = Server(open_session(run_dir, tmp_path / "ratings" / "r.csv", 2), "127.0.0.1", 0).start()
    try:
        a.port = srv2.port
        before = a.cookies["inkground_session"]
        st, s = a.json("GET", "/api/state")
        assert st == 200 and s["rater"] == "ann" and s["progress"]["done"] == 1
        assert a.cookies["inkground_session"] != before  # a new id, not the one the browser sent
        planted = Client(srv2.port)
        planted.req("GET", "/")
        planted.cookies["inkground_session"] = before
        assert planted.json("GET", "/api/state")[1]["rater"] is None and planted.login("ann")[0] == 409
        nxt = s["page"]["id"]
        assert a.json("POST", "/api/rate", {"page": nxt, "score": 7})[0] == 200  # rated under the new id
        assert a.json("GET", "/api/state")[1]["rater"] == "ann"
        assert session_hash(a.cookies["inkground_session"]) in (tmp_path / "ratings" / "r.csv").read_text()
        b = Client(srv2.port)  # another browser, with a forged rating cookie: nobody's
        b.req("GET", "/")
        b.cookies["inkground_rated"] = "forged-rated-cookie-0123456789abcdef"
        assert b.json("GET", "/api/state")[1]["rater"] is None and b.login("ann")[0] == 409
    finally:
        srv2.stop()
