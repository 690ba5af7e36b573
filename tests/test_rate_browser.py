"""inkground rate in a real browser (headless system Chromium driven by Playwright; no browser download):
two raters at once rate 20 pairs with keys and clicks, one reloads mid-way and resumes, one undoes, the
server is stopped and restarted mid-way; then the ratings file and the section-02 funnel built from it."""
import os
import shutil
from pathlib import Path

import pytest

from inkground_lib.rate.server import Server, open_session
from inkground_lib.pseudo.raters import agreement, read_ratings

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


def current_page(page) -> str:
    return page.locator("#rate").get_attribute("data-page") or ""


def wait_next(page, old: str) -> None:
    page.wait_for_function(
        "(old) => { const r = document.querySelector('#rate'); const d = document.querySelector('#done');"
        " return (!r.hidden && r.dataset.page && r.dataset.page !== old) || !d.hidden; }", arg=old)


def is_done(page) -> bool:
    return page.locator("#done").is_visible()


def test_two_raters_rate_20_pairs_in_chromium(pseudo_run):
    exe = need_chromium()
    from playwright.sync_api import sync_playwright

    tmp, cand, run = pseudo_run
    ratings = tmp / "ratings" / "people.csv"
    srv = Server(open_session(run, ratings, 2, pages="all"), "127.0.0.1", 0).start()
    port = srv.port
    given: dict[tuple[str, str], int] = {}
    errors: list[str] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, args=LAUNCH_ARGS)
            pages = {}
            for name in ("ann", "bob", "ANN"):
                ctx = browser.new_context(viewport={"width": 1200, "height": 900})
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
            # a function, not a bare expression: Playwright polls a bare expression through eval(), which the
            # app's Content-Security-Policy (script-src 'self') refuses once the answer takes more than one poll
            c.wait_for_function("() => document.querySelector('#login-error').textContent.length > 0")
            assert "another browser session" in c.locator("#login-error").text_content()
            assert c.locator("#rate").is_hidden()
            c.context.close()
            assert current_page(a) != current_page(b)  # reserved: two raters at once see different pages

            # zoom into words: the pen-path player of the word is inlined
            b.locator("#photo rect.word").first.click()
            assert b.locator("#zink svg").count() == 1 and "Word 1 of" in b.locator("#zoom-title").text_content()
            n_words = b.locator("#photo rect.word").count()
            assert f"Word 1 of {n_words}:" in b.locator("#zoom-title").text_content()
            b.keyboard.press("ArrowRight")
            assert f"Word {2 if n_words > 1 else 1} of {n_words}:" in b.locator("#zoom-title").text_content()
            b.keyboard.press("Escape")
            assert b.locator("#zoom").is_hidden()

            n = {"ann": 0, "bob": 0}

            def rate_one(pg, who):
                page_id = current_page(pg)
                k = n[who]
                score = 10 if who == "bob" or k % 3 else 7
                if k % 2 == 0:  # keys
                    pg.keyboard.press("t" if score == 10 else str(score))
                    assert pg.locator(f'#scores button[data-score="{score}"]').get_attribute("aria-pressed") == "true"
                    pg.keyboard.press("Enter")
                else:  # clicks
                    pg.click(f'#scores button[data-score="{score}"]')
                    pg.click("#submit")
                wait_next(pg, page_id)
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
                        pg.keyboard.press("u")
                        pg.wait_for_function("(p) => document.querySelector('#rate').dataset.page === p", arg=last)
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
                if not restarted and len(given) >= 10:  # the server dies mid-way and is started again
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
            assert "Nothing left" in a.locator("#done-msg").text_content()
            a.goto(srv.url + "stats")
            assert a.locator("#n-ratings").text_content() == "20"
            alpha_shown = a.locator("#alpha").text_content()
            browser.close()
    finally:
        srv.stop()
    assert not errors, errors

    # the ratings file: 20 standing ratings, K = 2 different raters per page, what was clicked / typed
    df = read_ratings(ratings)
    assert len(df) == 20 and set(df["source"]) == {"real"}
    assert {(r.page, r.rater): r.score for r in df.itertuples()} == given
    assert (df.groupby("page")["rater"].nunique() == 2).all() and df["page"].nunique() == 10
    raw = ratings.read_text().splitlines()
    assert len(raw) == 1 + 20 + 2 and sum(",undo," in line for line in raw) == 1  # header, ratings, undo pair
    ag = agreement(df)
    assert alpha_shown == ("—" if ag["alpha"] != ag["alpha"] else f"{ag['alpha']:.3f}")

    # section 02 from these ratings
    from inkground_lib.pseudo.run import run_pseudo_labels
    from inkground_lib.report.pseudo_labels import provenance

    res = run_pseudo_labels(cand, run, ratings=ratings, progress=False, workers=1)
    passed = set(res.pages.loc[res.pages["ocr_pass"], "page"])
    want = {p for p in passed if given[(p, "ann")] == 10 and given[(p, "bob")] == 10}
    assert set(res.pages.loc[res.pages["kept"], "page"]) == want
    assert int(res.funnel.iloc[2]["pages"]) == len(want)
    assert res.components["ratings_source"] == "file: people.csv"
    text = provenance(res)["ratings"]
    assert text.startswith(f"{2 if passed else 0} raters, real ratings (file people.csv") and "simulated" not in text.lower()
