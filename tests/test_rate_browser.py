"""inkground rate in a real browser (headless system Chromium driven by Playwright; no browser download), in a
laptop-sized window (1366 x 768): two raters at once rate 20 pairs with keys and clicks, one reloads mid-way
and resumes, one undoes, the server is stopped and restarted mid-way; after every action the zoom, the score
buttons and the message line are inside the window and the message says what happened. Half-way and at the
end, section 02 runs from the ratings file, and its kept count, agreement and alpha (and /stats') are compared
with a computation of our own from the CSV."""
import os
import shutil
from pathlib import Path

import pytest

from inkground_lib.core.defaults import DIGIT_PAIR_MS
from inkground_lib.pseudo.raters import RatingsError, read_ratings
from inkground_lib.rate.server import Server
from inkground_lib.rate.session import open_session

CHROMIUM = "/usr/bin/chromium"
# Playwright's BrowserType.launch(executable_path=...) runs a browser already installed instead of one it
# downloads (https://playwright.dev/python/docs/api/class-browsertype#browser-type-launch, checked 2026-11-30).
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--disable-quic"]

pytestmark = pytest.mark.browser


def need_chromium() -> str:
    exe = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if not exe:
        why = "Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("playwright is not installed (pip install -r requirements.txt)")
        pytest.skip("playwright is not installed")
    return exe


@pytest.fixture(scope="module")
def pseudo_run(tmp_path_factory):
    """A real pseudo-label run: 10 small synthetic pages (1-2 words each) through section 02's pipeline."""
    from inkground_lib.datasets.synth.generate import SynthParams, generate
    from inkground_lib.pseudo.run import run_pseudo_labels

    tmp = tmp_path_factory.mktemp("rate_browser")
    cand = generate(tmp / "ds", SynthParams(pages=10, width=500, height=650, words_min=1, words_max=2,
                                            words_mean=1.5, seed=3), progress=False, workers=1)
    run_pseudo_labels(cand, tmp / "run", progress=False, n_raters=4, workers=1)  # ~4 s: 1-2 words a page
    (tmp / "ratings").mkdir()
    return tmp, Path(cand), tmp / "run"


VIEWPORT = {"width": 1366, "height": 768}

# Each poll and probe is a function `() => ...` / `(arg) => ...`: Playwright polls a bare expression through
# eval(), which the app's Content-Security-Policy (script-src 'self') refuses.
IN_VIEW = """(ids) => {
  const H = window.innerHeight, W = window.innerWidth;
  const bar = document.getElementById('controls').getBoundingClientRect();
  const out = {};
  for (const id of ids) {
    const e = document.getElementById(id);
    if (!e || e.hidden || e.offsetParent === null) { out[id] = 'not shown'; continue; }
    const r = e.getBoundingClientRect();
    const bottom = id === 'zoom' ? bar.top : H;  // the zoom must not hide behind the bar
    out[id] = (r.width > 0 && r.height > 0 && r.top >= -0.5 && r.left >= -0.5 && r.right <= W + 0.5 &&
               r.bottom <= bottom + 0.5) ? 'in view' : `top ${r.top} bottom ${r.bottom} limit ${bottom}`;
  }
  return out;
}"""


def current_page(page) -> str:
    return page.locator("#rate").get_attribute("data-page") or ""


def msg_n(page) -> int:
    return int(page.locator("#msg").get_attribute("data-n") or 0)


def wait_msg(page, before: int) -> str:
    """The message line once it has changed and is not a progress message ("Saving ...…": the save's answer
    replaces it), so a slow save under load is not read half-way."""
    page.wait_for_function("(n) => { const m = document.querySelector('#msg'); "
                           "return Number(m.dataset.n) > n && !m.textContent.trim().endsWith('\u2026'); }",
                           arg=before)
    return page.locator("#msg").text_content()


def assert_in_view(page, zoom: bool = False, rating: bool = True) -> None:
    ids = (["scores", "submit", "undo"] if rating else ["undo"]) + ["msg"] + (["zoom"] if zoom else [])
    got = page.evaluate(IN_VIEW, ids)
    assert got == {i: "in view" for i in ids}, got


def act(page, do, expect: str, zoom: bool = False, rating: bool = True) -> str:
    """Do one action, then: the message line changed and says ``expect``; the buttons, the message (and the
    zoom) are inside the window."""
    before = msg_n(page)
    do()
    text = wait_msg(page, before)
    assert expect in text, (expect, text)
    assert_in_view(page, zoom=zoom, rating=rating)
    return text


def wait_next(page, old: str) -> None:
    page.wait_for_function(
        "(old) => { const r = document.querySelector('#rate'); const d = document.querySelector('#done');"
        " return (!r.hidden && r.dataset.page && r.dataset.page !== old) || !d.hidden; }", arg=old)


def is_done(page) -> bool:
    return page.locator("#done").is_visible()


def by_hand(csv_path: Path, pages: list[str], k: int) -> dict:
    """Kept count, agreement and Krippendorff's alpha on accept (10) / reject over ``pages``, computed here from
    the raw CSV (the rows in order, an undo withdrawing that rater's rating), not with the library's functions.
    Binary nominal alpha: 1 - (n - 1) * sum_u n_u1 n_u0 / (m_u - 1) / (n1 n0) over pages with two or more."""
    import csv

    standing: dict[tuple[str, str], int] = {}
    for r in csv.DictReader(open(csv_path, newline="")):
        key = (r["page"], r["rater"])
        if r["action"] == "undo":
            del standing[key]
        else:
            standing[key] = int(r["score"])
    per: dict[str, list[int]] = {p: [] for p in pages}
    for (p, _), sc in standing.items():
        if p in per:
            per[p].append(sc)
    kept = sorted(p for p, v in per.items() if len(v) >= k and min(v) == 10)
    multi = [v for v in per.values() if len(v) >= 2]
    agree = sum(len({x == 10 for x in v}) == 1 for v in multi) / len(multi) if multi else float("nan")
    n1 = sum(x == 10 for v in multi for x in v)
    n0 = sum(x != 10 for v in multi for x in v)
    n = n1 + n0
    dis = sum(sum(x == 10 for x in v) * sum(x != 10 for x in v) / (len(v) - 1) for v in multi)
    alpha = 1 - (n - 1) * dis / (n1 * n0) if n1 and n0 else float("nan")
    awaiting = sum(len(v) < k for v in per.values())
    return {"kept": kept, "agreement": agree, "alpha": alpha, "awaiting": awaiting,
            "ratings": sum(len(v) for v in per.values())}


def same(a: float, b) -> bool:
    return (a != a and (b is None or b != b)) or (b is not None and abs(a - b) < 1e-12)


def check_section_02(cand, run, ratings, srv_url, page, k=2) -> dict:
    """Section 02 from the file now, against our own computation and /stats: kept, agreement, alpha."""
    from inkground_lib.pseudo.run import run_pseudo_labels, summary_numbers

    try:
        res = run_pseudo_labels(cand, run, ratings=ratings, progress=False, workers=1)
        partial = False
    except RatingsError as e:  # more than half of the pages await ratings: refused unless told
        assert "allow-partial-ratings" in str(e) and "await ratings" in str(e)
        res = run_pseudo_labels(cand, run, ratings=ratings, progress=False, workers=1, allow_partial_ratings=True)
        partial = True
    passed = res.pages.loc[res.pages["ocr_pass"], "page"].tolist()
    want = by_hand(ratings, passed, k)
    nums = summary_numbers(res)
    assert sorted(res.pages.loc[res.pages["kept"], "page"]) == want["kept"]
    assert nums["benchmark_pages"] == len(want["kept"]) and nums["pages_awaiting_ratings"] == want["awaiting"]
    assert same(want["agreement"], nums["rater_agreement"]) and same(want["alpha"], nums["rater_alpha"])
    assert partial == (2 * want["awaiting"] > len(passed))
    used = __import__("pandas").read_csv(run / "ratings.csv", dtype={"page": str})
    assert len(used) == want["ratings"] and set(used["source"]) <= {"real"}  # the ratings it used
    # /stats: the same pages, the same numbers
    page.goto(srv_url + "stats")
    assert int(page.locator("#kept").text_content()) == len(want["kept"])
    assert int(page.locator("#awaiting").text_content()) == want["awaiting"]
    for sel, v in (("#agreement", want["agreement"]), ("#alpha", want["alpha"])):
        assert page.locator(sel).text_content() == ("—" if v != v else f"{v:.3f}")
    assert page.locator("#used-list").text_content() == (", ".join(passed) or "none")
    page.go_back()
    page.wait_for_selector("#rate:not([hidden]), #done:not([hidden])")
    return {**want, "passed": len(passed), "partial": partial}


def test_two_raters_rate_20_pairs_in_chromium(pseudo_run):
    exe = need_chromium()
    from playwright.sync_api import sync_playwright

    tmp, cand, run = pseudo_run
    ratings = tmp / "ratings" / "people.csv"
    srv = Server(open_session(run, ratings, 2, pages="all"), "127.0.0.1", 0).start()
    port = srv.port
    given: dict[tuple[str, str], int] = {}
    errors: list[str] = []
    checks = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, args=LAUNCH_ARGS)
            pages = {}
            for name in ("ann", "bob", "ANN"):
                ctx = browser.new_context(viewport=VIEWPORT)
                pg = ctx.new_page()
                pg.set_default_timeout(15000)
                pg.on("pageerror", lambda e, who=name: errors.append(f"{who}: {e}"))
                if name != "ANN":  # its refused login (409) is expected
                    pg.on("console", lambda m, who=name: errors.append(f"{who}: {m.text}") if m.type == "error" else None)
                pg.goto(srv.url)
                pg.fill("#name", name)
                pg.click("#start")
                pages[name] = pg
            a, b, c = pages["ann"], pages["bob"], pages["ANN"]
            a.wait_for_selector("#rate:not([hidden])")
            b.wait_for_selector("#rate:not([hidden])")
            # the name is bound to ann's browser session: a third browser cannot take it
            c.wait_for_function("() => document.querySelector('#login-error').textContent.length > 0")
            assert "another browser session" in c.locator("#login-error").text_content()
            assert c.locator("#rate").is_hidden()
            c.context.close()
            assert current_page(a) != current_page(b)  # reserved: two raters at once see different pages
            assert_in_view(a)
            assert f"within {DIGIT_PAIR_MS / 1000:g} s" in a.locator("#keys").text_content()  # the scheme, stated

            # zoom into words: it scrolls into view above the bar, the player is inlined, each key is confirmed
            n_words = b.locator("#photo rect.word").count()
            act(b, lambda: b.locator("#photo rect.word").last.click(), f"Word {n_words} of {n_words}", zoom=True)
            assert b.locator("#zink svg").count() == 1 and "Word" in b.locator("#zoom-title").text_content()
            act(b, lambda: b.keyboard.press("ArrowRight"), f"Word 1 of {n_words}", zoom=True)
            act(b, lambda: b.keyboard.press("r"), "Replaying the pen path", zoom=True)
            act(b, lambda: b.keyboard.press("Escape"), "Zoom closed")
            assert b.locator("#zoom").is_hidden()
            # "1" then "0" within the window gives 10; with a pause, 0
            act(b, lambda: (b.keyboard.press("1"), b.keyboard.press("0")), "Score 10 chosen (1 then 0)")
            assert b.locator('#scores button[data-score="10"]').get_attribute("aria-pressed") == "true"
            act(b, lambda: b.keyboard.press("1"), "Score 1 chosen (type 0 now for 10)")
            b.wait_for_timeout(DIGIT_PAIR_MS + 400)
            act(b, lambda: b.keyboard.press("0"), "Score 0 chosen")
            assert b.locator('#scores button[data-score="0"]').get_attribute("aria-pressed") == "true"

            n = {"ann": 0, "bob": 0}

            def rate_one(pg, who):
                page_id = current_page(pg)
                k = n[who]
                score = 10 if who == "bob" or k % 3 else 7
                if k % 4 == 1:  # open the zoom first: the buttons and the message stay in view with it open
                    act(pg, lambda: pg.locator("#photo rect.word").first.click(), "Zoomed in", zoom=True)
                if k % 2 == 0:  # keys; 10 as "1" then "0" or "t"
                    keys = (["1", "0"] if k % 4 == 0 else ["t"]) if score == 10 else [str(score)]
                    act(pg, lambda: [pg.keyboard.press(x) for x in keys], f"Score {score} chosen", zoom=k % 4 == 1)
                    assert pg.locator(f'#scores button[data-score="{score}"]').get_attribute("aria-pressed") == "true"
                    do = lambda: pg.keyboard.press("Enter")  # noqa: E731
                else:  # clicks
                    act(pg, lambda: pg.click(f'#scores button[data-score="{score}"]'), f"Score {score} chosen",
                        zoom=k % 4 == 1)
                    do = lambda: pg.click("#submit")  # noqa: E731
                before = msg_n(pg)
                do()
                wait_next(pg, page_id)
                pg.wait_for_function("(n) => Number(document.querySelector('#msg').dataset.n) > n", arg=before)
                msg = pg.locator("#msg").text_content()
                assert f"Saved: {score} for page {page_id}." in msg, msg
                assert_in_view(pg, rating=not is_done(pg))
                given[(page_id, who)] = score
                n[who] += 1
                return page_id

            restarted = False
            while not (is_done(a) and is_done(b)):
                for who, pg in (("ann", a), ("bob", b)):
                    if is_done(pg):
                        continue
                    last = rate_one(pg, who)
                    if who == "ann" and n["ann"] == 2:  # undo with "u": the page comes back; rate it again
                        act(pg, lambda: pg.keyboard.press("u"), f"Undone: your {given[(last, 'ann')]} for page {last}")
                        assert current_page(pg) == last
                        del given[(last, "ann")]
                        n["ann"] -= 1
                        rate_one(pg, who)
                    if who == "ann" and n["ann"] == 3:  # reload mid-way: resumes on the same page
                        before = current_page(pg)
                        pg.reload()
                        pg.wait_for_selector("#rate:not([hidden])")
                        assert current_page(pg) == before
                        assert "Rater: ann" in pg.locator("#who").text_content()
                        assert pg.locator("#count").text_content().startswith("You rated 3 pages")
                        assert_in_view(pg)
                if not restarted and len(given) >= 10:  # the raters stop; section 02 now; the server restarts
                    checks.append(check_section_02(cand, run, ratings, srv.url, a))
                    srv.stop()
                    srv = Server(open_session(run, ratings, 2, pages="all"), "127.0.0.1", port).start()
                    restarted = True
                    for who, pg in (("ann", a), ("bob", b)):
                        pg.reload()
                        pg.wait_for_selector("#rate:not([hidden]), #done:not([hidden])")
                        assert f"Rater: {who}" in pg.locator("#who").text_content()  # resumed, no new login
                        assert pg.locator("#count").text_content().startswith(f"You rated {n[who]} page")
                assert len(given) <= 20
            assert restarted and len(given) == 20
            assert "Thank you" in a.locator("#done-msg").text_content()
            assert "You rated" in a.locator("#done-progress").text_content()
            checks.append(check_section_02(cand, run, ratings, srv.url, a))

            # a rater who comes when every page has its ratings: no thanks, nothing to undo, a progress line
            ctx = browser.new_context(viewport=VIEWPORT)
            d = ctx.new_page()
            d.on("pageerror", lambda e: errors.append(f"cid: {e}"))
            d.goto(srv.url)
            d.fill("#name", "cid")
            d.click("#start")
            d.wait_for_selector("#done:not([hidden])")
            assert d.locator("#done-title").text_content() == "Nothing to rate"
            assert "Thank" not in d.locator("#done").text_content()
            assert d.locator("#undo").is_disabled()
            assert d.locator("#done-progress").text_content().startswith("You rated 0 pages")
            assert_in_view(d, rating=False)
            act(d, lambda: d.keyboard.press("u"), "Nothing to undo", rating=False)
            browser.close()
    finally:
        srv.stop()
    assert not errors, errors
    assert checks[0]["ratings"] < checks[1]["ratings"]  # the second run saw the ratings given after the first
    # half-way every page had one of its two ratings (fewest first): section 02 refused until told; at the end none
    # awaits ratings
    assert checks[0]["passed"] >= 3 and checks[0]["awaiting"] == checks[0]["passed"] and checks[0]["partial"]
    assert checks[1]["awaiting"] == 0 and not checks[1]["partial"]

    # the ratings file: 20 standing ratings, K = 2 different raters per page, what was clicked / typed
    df = read_ratings(ratings)
    assert len(df) == 20 and set(df["source"]) == {"real"}
    assert {(r.page, r.rater): r.score for r in df.itertuples()} == given
    assert (df.groupby("page")["rater"].nunique() == 2).all() and df["page"].nunique() == 10
    raw = ratings.read_text().splitlines()
    assert len(raw) == 1 + 20 + 2 and sum(",undo," in line for line in raw) == 1  # header, ratings, undo pair

    from inkground_lib.pseudo.run import run_pseudo_labels
    from inkground_lib.report.pseudo_labels import provenance

    res = run_pseudo_labels(cand, run, ratings=ratings, progress=False, workers=1)
    passed = set(res.pages.loc[res.pages["ocr_pass"], "page"])
    assert res.components["ratings_source"] == "file: people.csv"
    text = provenance(res)["ratings"]
    assert text.startswith(f"{2 if passed else 0} raters, real ratings (file people.csv") and "simulated" not in text.lower()


def test_a_moved_ratings_file_is_shown_to_the_rater(pseudo_run):
    """The ratings file moved away while the app runs: the rater's save is refused with a message in view
    ("nothing was saved"), no file appears at the old path, and once the file is back the save goes through."""
    exe = need_chromium()
    from playwright.sync_api import sync_playwright

    tmp, cand, run = pseudo_run
    ratings = tmp / "ratings" / "moved.csv"
    srv = Server(open_session(run, ratings, 2, pages="all"), "127.0.0.1", 0).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, args=LAUNCH_ARGS)
            pg = browser.new_context(viewport=VIEWPORT).new_page()
            pg.set_default_timeout(15000)
            pg.goto(srv.url)
            pg.fill("#name", "eve")
            pg.click("#start")
            pg.wait_for_selector("#rate:not([hidden])")
            page_id = current_page(pg)
            act(pg, lambda: pg.keyboard.press("t"), "Score 10 chosen")
            ratings.rename(tmp / "elsewhere.csv")
            before = msg_n(pg)
            pg.keyboard.press("Enter")
            pg.wait_for_function("(n) => Number(document.querySelector('#msg').dataset.n) > n + 1", arg=before)
            text = pg.locator("#msg").text_content()
            assert "is gone (moved or deleted)" in text and "nothing was saved" in text, text
            assert "error" in pg.locator("#msg").get_attribute("class").split()
            assert_in_view(pg)
            assert current_page(pg) == page_id and not ratings.exists()
            (tmp / "elsewhere.csv").rename(ratings)
            act(pg, lambda: pg.keyboard.press("t"), "Score 10 chosen")
            act(pg, lambda: pg.keyboard.press("Enter"), f"Saved: 10 for page {page_id}.")
            browser.close()
    finally:
        srv.stop()
    assert len(read_ratings(ratings)) == 1
