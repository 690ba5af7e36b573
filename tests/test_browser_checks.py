"""Every check in browser_checks.py can fail: for each, a tiny hand-written page that violates it (the problem is
reported, naming page, width and element) and one that passes (nothing reported). Real headless Chromium, one
browser for the module."""
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import browser_checks as bc  # noqa: E402

from inkground_lib.core.ink import as_ink  # noqa: E402
from inkground_lib.report.player import pen_path_svg  # noqa: E402

pytestmark = pytest.mark.browser

STYLE = """<style>body{margin:8px;font:16px sans-serif} article{display:block} img,svg{max-width:100%;height:auto}
.scroll{overflow-x:auto}</style>"""
RED_DOT = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" '
           'fill="#D55E00"/></svg>')


def write_page(tmp_path: Path, name: str, article: str, head: str = "", outside: str = "") -> Path:
    """A page shaped like a Jupyter Book 1.x page: <main><article class="bd-article">...</article></main>, with a
    local image (dot.svg) beside it."""
    (tmp_path / "dot.svg").write_text(RED_DOT)
    page = tmp_path / name
    page.write_text(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{name}</title>{STYLE}{head}'
                    f'</head><body><main>{outside}<article class="bd-article" role="main">{article}</article>'
                    f'</main></body></html>')
    return page


def zigzag(n=6):
    return as_ink([[[10 * i, 0, 0], [10 * i + 5, 40, 50], [10 * i + 10, 0, 100]] for i in range(n)])


def player_figure(svg: str, caption: str = "The prediction drawn in pen order.") -> str:
    cap = f"<figcaption><p>{caption}</p></figcaption>" if caption is not None else ""
    return f'<figure class="align-default">{svg}{cap}</figure>'


GOOD = (
    "<h1>A good page</h1><p>The mean is 7.25 words per page; a missing value shows as — (no pages).</p>"
    '<figure class="align-default" id="fig-dot"><img alt="A vermillion rectangle, the word box colour" '
    'src="dot.svg"><figcaption><p><span class="caption-number">Fig. 1 </span>'
    '<span class="caption-text">Word boxes.</span></p></figcaption></figure>'
    + player_figure(pen_path_svg([(zigzag(), "prediction")], fig_id="good-player"))
    # code: NaN / None / {glue in code blocks, inline code and scripts are not raw values
    + '<div class="highlight-python notranslate"><div class="highlight"><pre>x = None  # NaN, nan, {glue}</pre>'
      "</div></div><pre>float('nan')</pre><p>Pass <code class=\"docutils literal\"><span class=\"pre\">None"
      "</span></code> for the default.</p><script>const v = NaN; /* None {glue */</script>"
      '<p style="display:none">None (hidden)</p>'
    # a long code line inside its own scroll box is allowed; a table fits its column
    + '<div class="pst-scrollable-table-container scroll"><table><thead><tr><th>system</th><th>DTW (valid only)</th>'
      "</tr></thead><tbody><tr><td>box</td><td>0.287 [0.282, 0.291]</td></tr></tbody></table></div>"
      "<div class=\"highlight\"><pre class=\"scroll\">" + "long_code_line_" * 80 + "</pre></div>"
    # math that is text: a price, a lone dollar, LaTeX in code
    + "<p>A call costs $50 to $60, or US$ 5; set <code>$\\mathrm{CD}$</code> in code.</p>"
)


@pytest.fixture(scope="module")
def chrome():
    with bc.browser(bc.require_chromium()) as b:
        yield b


# --- require_chromium -------------------------------------------------------------------------------------------

def test_missing_chromium_skips_locally_and_fails_on_ci(monkeypatch):
    monkeypatch.setattr(bc, "chromium_path", lambda: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"chromium is not installed \(apt-get install -y chromium\)"):
        bc.require_chromium()
    for ci in ("true", "1", "TRUE"):
        monkeypatch.setenv("CI", ci)
        with pytest.raises(pytest.fail.Exception, match="chromium is not installed"):
            bc.require_chromium()
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        bc.require_chromium()


# --- check_page -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("width", [1400, 420])
def test_good_page_passes(chrome, tmp_path, width):
    assert bc.check_page(chrome, write_page(tmp_path, "good.html", GOOD), width) == []


def test_console_and_page_errors_are_reported(chrome, tmp_path):
    head = ("<script>console.error('the table failed')</script><script>throw new Error('boom at load')</script>"
            "<script>window.addEventListener('load', () => { undefinedFunction(); })</script>")
    problems = bc.check_page(chrome, write_page(tmp_path, "err.html", GOOD, head=head), 1400)
    assert "err.html at 1400 px: console error: the table failed" in problems, problems
    assert "err.html at 1400 px: page error: Error: boom at load" in problems, problems
    assert any(p.startswith("err.html at 1400 px: page error: ReferenceError: undefinedFunction") for p in problems)
    assert len(problems) == 3, problems


def test_a_console_log_or_warning_is_not_an_error(chrome, tmp_path):
    page = write_page(tmp_path, "log.html", GOOD, head="<script>console.log('hello'); console.info('x')</script>")
    assert bc.check_page(chrome, page, 1400) == []


def test_external_requests_are_reported_and_aborted(chrome, tmp_path):
    markup = ('<figure><img alt="A remote picture" src="https://example.org/x.png"><figcaption>Remote.</figcaption>'
              '</figure><link rel="stylesheet" href="https://cdn.example.org/theme.css">'
              "<script>fetch('http://127.0.0.1:9/beacon').catch(() => {})</script>")
    problems = bc.check_page(chrome, write_page(tmp_path, "ext.html", GOOD + markup), 420)
    for url in ["https://example.org/x.png", "https://cdn.example.org/theme.css", "http://127.0.0.1:9/beacon"]:
        assert f"ext.html at 420 px: request to {url} (not a local file; aborted)" in problems, problems


def test_external_requests_never_reach_the_network(chrome, tmp_path):
    """Aborted, not merely recorded: the image never loads."""
    page = write_page(tmp_path, "ext2.html", '<img id="r" alt="remote" src="https://example.org/x.png">')
    problems: list[str] = []
    with bc._open(chrome, page, 1400, problems, "ext2.html") as p:
        assert p.evaluate("document.getElementById('r').naturalWidth") == 0
    assert any("https://example.org/x.png" in x for x in problems)


def test_raw_values_in_the_text_are_reported(chrome, tmp_path):
    words = ["NaN", "None", "nan", "{glue:text}`n_pages`"]
    paragraphs = "".join(f"<p>The mean stroke count is {w} per word.</p>" for w in words)
    problems = bc.check_page(chrome, write_page(tmp_path, "raw.html", GOOD + paragraphs), 1400)
    for w in words:
        assert f"raw.html at 1400 px: raw NaN/None/glue in <p>: 'The mean stroke count is {w} per word.'" in problems
    assert len(problems) == 4, problems


def test_raw_values_in_a_table_cell_are_reported_and_words_can_be_exempted(chrome, tmp_path):
    page = write_page(tmp_path, "cell.html", GOOD + "<table><tr><td>nan</td><td>{glue:text}`x`</td></tr></table>")
    problems = bc.check_page(chrome, page, 1400)
    assert sum("raw NaN/None/glue in <td>" in p for p in problems) == 2, problems
    # a hand-written page about NaN handling: the words are allowed, unresolved glue is not
    problems = bc.check_page(chrome, page, 1400, raw_words=False)
    assert len(problems) == 1 and "{glue" in problems[0], problems


def test_words_inside_other_words_are_not_raw_values(chrome, tmp_path):
    page = write_page(tmp_path, "words.html", GOOD + "<p>Nonetheless, a nanometre of Nancy's finance.</p>")
    assert bc.check_page(chrome, page, 1400) == []


def test_alt_text_must_describe_the_image(chrome, tmp_path):
    cases = [  # (alt attribute, src, expected problem or None)
        ('alt="fig1.png"', "a.svg", 'has a file name for alt text: "fig1.png"'),
        ('alt="b"', "b.svg", 'has a file name for alt text: "b"'),  # the file's stem
        ('alt="c.svg"', "c.svg", 'has a file name for alt text: "c.svg"'),
        ('alt="../../_images/ab12.png"', "d.svg", 'has a file name for alt text: "../../_images/ab12.png"'),
        ('alt=""', "e.svg", "has no alt text"),
        ("", "f.svg", "has no alt text"),
        ('alt="Word boxes on page 3 (orange)"', "g.svg", None),
    ]
    figures = "".join(f'<figure><img {alt} src="{src}"><figcaption>Word boxes.</figcaption></figure>'
                      for alt, src, _ in cases)
    page = write_page(tmp_path, "alt.html", figures)
    for _, src, _ in cases:
        (tmp_path / src).write_text(RED_DOT)
    problems = bc.check_page(chrome, page, 1400)
    for _, src, expected in cases:
        mine = [p for p in problems if p.startswith(f'alt.html at 1400 px: <img src="{src}">')]
        assert mine == ([f'alt.html at 1400 px: <img src="{src}"> {expected}'] if expected else []), problems


def test_every_image_needs_a_caption(chrome, tmp_path):
    cases = [
        # a bare cell-output image, as Jupyter Book 1.x renders a plot without {glue:figure}
        ('<div class="cell_output docutils container"><img alt="Histogram" src="a.svg"></div>', "a.svg",
         "is not inside a <figure>"),
        ('<figure><img alt="Histogram" src="b.svg"></figure>', "b.svg", "its <figure> has no <figcaption>"),
        ('<figure><img alt="Histogram" src="c.svg"><figcaption> </figcaption></figure>', "c.svg",
         "its <figcaption> is empty"),
    ]
    page = write_page(tmp_path, "cap.html", "".join(m for m, _, _ in cases))
    for _, src, _ in cases:
        (tmp_path / src).write_text(RED_DOT)
    problems = bc.check_page(chrome, page, 420)
    assert problems == [f'cap.html at 420 px: <img src="{src}"> has no caption: {why}' for _, src, why in cases]


def test_a_player_needs_a_caption_and_an_accessible_name(chrome, tmp_path):
    svg = pen_path_svg([(zigzag(), "prediction")], fig_id="anon", title="Pen path")
    bare = re.sub(r' aria-label="[^"]*"', "", svg).replace("<title>Pen path</title>", "")
    problems = bc.check_page(chrome, write_page(tmp_path, "pl.html", f"<div>{bare}</div>"), 1400)
    assert any('pen-path player <svg id="anon" class="ig-pen-player"> has no accessible name' in p
               for p in problems), problems
    assert any('pen-path player <svg id="anon" class="ig-pen-player"> has no caption: is not inside a <figure>' in p
               for p in problems), problems
    # either the aria-label or the <title> is enough; a caption makes it whole
    only_title = re.sub(r' aria-label="[^"]*"', "", svg)
    assert bc.check_page(chrome, write_page(tmp_path, "pl2.html", player_figure(only_title)), 1400) == []


def test_a_wide_element_overflows_the_article_at_420_px(chrome, tmp_path):
    page = write_page(tmp_path, "wide.html", GOOD + '<div class="too-wide" style="width:2000px">a wide block</div>')
    problems = bc.check_page(chrome, page, 420)
    hits = [p for p in problems if "<div class='too-wide'> 'a wide block' extends" in p]
    assert len(hits) == 1 and hits[0].startswith("wide.html at 420 px: "), problems
    excess = int(re.search(r"extends (\d+) px", hits[0]).group(1))
    assert 2000 - 420 <= excess <= 2000 - 420 + 16  # 2000 px wide in a 404 px article (8 px body margin)


def test_tables_code_and_images_must_fit_or_scroll(chrome, tmp_path):
    cases = [
        ('<table id="t" style="width:1000px"><tr><td>a table without its scroll box</td></tr></table>', "<table>"),
        ("<pre>" + "long_code_line_" * 60 + "</pre>", "<pre>"),
        ('<figure><img alt="A wide plot" src="dot.svg" style="width:900px;max-width:none">'
         "<figcaption>Wide.</figcaption></figure>", "<img>"),
        ("<p>" + "unbreakable_identifier_" * 30 + "</p>", "<p>"),
        ('<p>Run <code class="docutils literal">' + "gemini_best_readability_" * 3 + "</code> again.</p>",
         "<p> 'Run gemini"),
    ]
    problems = bc.check_page(chrome, write_page(tmp_path, "fit.html", "".join(m for m, _ in cases)), 420)
    # the table is also wider than its column (test_a_table_wider_than_its_column_is_reported)
    problems = [p for p in problems if "wider than its column" not in p]
    for _, tag in cases:
        assert any(p.startswith(f"fit.html at 420 px: {tag[:-1]}") and "past the article's right edge" in p
                   for p in problems), (tag, problems)
    assert "(widest inside: <code class='docutils literal'> 'gemini_best_readability_" in problems[-1]
    assert len(problems) == len(cases), problems  # the innermost block, not every ancestor
    # each inside its own scroll box is allowed
    boxed = "".join(f'<div class="scroll">{m}</div>' for m, _ in cases)
    problems = bc.check_page(chrome, write_page(tmp_path, "boxed.html", boxed), 420)
    assert len(problems) == 1 and "table 'starting a table without its scroll box' is" in problems[0], problems


def test_an_article_wider_than_the_viewport_is_reported(chrome, tmp_path):
    page = write_page(tmp_path, "vw.html", "<p>text</p>", head="<style>article{width:700px}</style>")
    problems = bc.check_page(chrome, page, 420)
    assert any("vw.html at 420 px: <article class='bd-article'>" in p and "the viewport" in p for p in problems)
    assert bc.check_page(chrome, page, 1400) == []


def test_a_page_without_an_article_is_reported(chrome, tmp_path):
    page = tmp_path / "bare.html"
    page.write_text("<!DOCTYPE html><html><body><div>no article here</div></body></html>")
    assert bc.check_page(chrome, page, 1400) == ["bare.html at 1400 px: no article element "
                                                 "(article.bd-article / main .bd-article / article / main)"]


# --- check_animation --------------------------------------------------------------------------------------------

def test_the_real_player_advances_and_stands_still_with_reduced_motion(chrome, tmp_path):
    page = write_page(tmp_path, "anim.html", GOOD)
    assert bc.check_animation(chrome, page) == []


def test_a_still_svg_fails_the_animation_check(chrome, tmp_path):
    still = ('<svg xmlns="http://www.w3.org/2000/svg" id="still" class="ig-pen-player" role="img" '
             'aria-label="A still drawing" width="200" height="60" viewBox="0 0 200 60"><title>Still</title>'
             '<path d="M10 30L190 30" stroke="#0072B2" stroke-width="3"/></svg>')
    problems = bc.check_animation(chrome, write_page(tmp_path, "still.html", player_figure(still)))
    assert "still.html at 1400 px: the pen-path player #still runs no CSS animation" in problems, problems
    assert any(p.startswith("still.html at 1400 px: the pen-path player #still does not advance") for p in problems)


def test_a_paused_player_fails_the_animation_check(chrome, tmp_path):
    # held paused, with no script to start it when it comes into view
    svg = pen_path_svg([(zigzag(), "prediction")], fig_id="paused", controls=False).replace(
        'class="ig-pen-player"', 'class="ig-pen-player pz"')
    problems = bc.check_animation(chrome, write_page(tmp_path, "paused.html", player_figure(svg)))
    assert any("#paused does not advance" in p for p in problems), problems


def test_a_player_that_ignores_reduced_motion_is_reported(chrome, tmp_path):
    svg = pen_path_svg([(zigzag(), "prediction")], fig_id="moving", total_ms=8000)
    svg = re.sub(r"@media \(prefers-reduced-motion: reduce\)\{.*?\}\}", "", svg)
    assert "prefers-reduced-motion" not in svg
    problems = bc.check_animation(chrome, write_page(tmp_path, "moving.html", player_figure(svg)))
    rm = [p for p in problems if p.startswith("moving.html at 1400 px, reduced motion: the pen-path player #moving")]
    assert any("still runs" in p for p in rm) and any("moves" in p for p in rm), problems
    assert any("does not show the final drawing" in p for p in rm), problems


def test_reduced_motion_must_show_the_final_drawing(chrome, tmp_path):
    """A player that hides the drawing under reduced motion stands still but shows nothing: reported."""
    svg = pen_path_svg([(zigzag(), "prediction")], fig_id="blank")
    svg = svg.replace("@media (prefers-reduced-motion: reduce){#blank *{animation:none!important}",
                      "@media (prefers-reduced-motion: reduce){#blank *{animation:none!important}"
                      "#blank .dr{display:none}")
    assert "#blank .dr{display:none}" in svg
    problems = bc.check_animation(chrome, write_page(tmp_path, "blank.html", player_figure(svg)))
    assert len(problems) == 1 and "#blank does not show the final drawing" in problems[0], problems


def test_a_page_without_a_player_fails_the_animation_check(chrome, tmp_path):
    page = write_page(tmp_path, "none.html", "<p>No player here.</p>")
    assert bc.check_animation(chrome, page) == ["none.html at 1400 px: no pen-path player (svg.ig-pen-player) "
                                                "on the page"]


# --- check_downloads --------------------------------------------------------------------------------------------

def built_site(tmp_path: Path, notebook_text: str = "", html_text: str = "") -> Path:
    site = tmp_path / "_build" / "html"
    (site / "_sources" / "book" / "sections").mkdir(parents=True)
    (site / "book" / "sections").mkdir(parents=True)
    nb = ('{"cells": [{"cell_type": "code", "outputs": [{"name": "stderr", "output_type": "stream", "text": ["%s"]}]}],'
          ' "metadata": {"papermill": {"input_path": "notebooks/01.ipynb"}}}')
    (site / "_sources" / "book" / "sections" / "01_stats.ipynb").write_text(nb % notebook_text)
    (site / "_sources" / "book" / "intro.md").write_text("# Intro\n")
    (site / "book" / "sections" / "01_stats.html").write_text(f"<html><body><p>{html_text}</p></body></html>")
    (site / "_static").mkdir()
    (site / "_static" / "theme.js").write_text("console.warn('Warning: theme code is not a page')")
    return site


def test_clean_downloads_pass(tmp_path):
    site = built_site(tmp_path, "progress 4/4", "All 4 pages.")
    assert bc.check_downloads(site, tmp_path) == []


def test_a_build_path_and_a_warning_in_a_notebook_are_reported(tmp_path):
    leak = ("/tmp/pytest-of-root/pytest-3/book0/.venv/lib/python3.11/site-packages/tqdm/auto.py:21: "
            "TqdmWarning: IProgress not found.")
    site = built_site(tmp_path, leak)
    # the build root of this run is another pytest directory: its /tmp/pytest-of-root prefix still catches it
    problems = bc.check_downloads(site, Path("/tmp/pytest-of-root/pytest-7/book1"))
    nb = "_sources/book/sections/01_stats.ipynb"
    assert any(p.startswith(f"{nb}: the build machine's path '/tmp/pytest-of-root'") and "tqdm/auto.py" in p
               for p in problems), problems
    assert any(p.startswith(f"{nb}: 'Warning' (1x)") and "TqdmWarning" in p for p in problems), problems
    assert len(problems) == 2


def test_papermill_paths_and_pages_are_searched(tmp_path):
    root = tmp_path / "buildroot"
    nb_meta = f"{root}/book/sections/.01.running.ipynb"
    site = built_site(tmp_path, f"written to {nb_meta}", f"Read from {root}/ds and /work/main/notebooks: UserWarning")
    problems = bc.check_downloads(site, root, sources=["/work/main"])
    assert any(p.startswith("_sources/book/sections/01_stats.ipynb: the build machine's path") and str(root) in p
               for p in problems), problems
    page = "book/sections/01_stats.html"
    assert any(p.startswith(f"{page}: the build machine's path '{root}'") for p in problems), problems
    assert any(p.startswith(f"{page}: the build machine's path '/work/main'") for p in problems), problems
    assert any(p.startswith(f"{page}: 'Warning'") and "UserWarning" in p for p in problems), problems
    assert not any(p.startswith("_static") for p in problems)  # theme assets are not pages


def test_downloads_folder_and_home_directory_are_searched(tmp_path, monkeypatch):
    home = tmp_path / "home" / "builder"
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: home))
    site = built_site(tmp_path)
    (site / "_downloads" / "ab12").mkdir(parents=True)
    (site / "_downloads" / "ab12" / "run.ipynb").write_text(f'{{"text": "cached in {home}/.cache/x"}}')
    (site / "_downloads" / "ab12" / "plot.png").write_bytes(bytes(range(256)) * 4)  # binary: skipped
    problems = bc.check_downloads(site, home / "inkground")
    assert problems == [f"_downloads/ab12/run.ipynb: the build machine's path '{home}/' (1x), e.g. "
                        f"'{{\"text\": \"cached in {home}/.cache/x\"}}'"], problems


def test_warning_is_case_sensitive(tmp_path):
    site = built_site(tmp_path, "no warnings were raised", "warnings: none")
    assert bc.check_downloads(site, tmp_path / "elsewhere") == []


# --- unrendered math (issue 27) ---------------------------------------------------------------------------------

MATHJAX = next(Path(sys.prefix).glob("lib/python*/site-packages/sphinx-mathjax-offline/static/mathjax/tex-chtml.js"),
               None)


def test_unrendered_math_is_reported(chrome, tmp_path):
    cases = [  # (markup, the text reported)
        ("<p>ignores order: $\\mathrm{CD}(P, R) = \\tfrac12\\big(\\tfrac1n$</p>", "$\\mathrm{CD}(P, R)"),
        ("<ul><li><p>+ \\tfrac1m \\sum_j \\min_i</p></li></ul>", "+ \\tfrac1m"),
        ("<p>the mean $x$ of all words</p>", "$x$"),
        ("<p>display math \\[ a = b \\] left as text</p>", "\\[ a = b \\]"),
        ("<p>inline \\(h\\) as typed</p>", "\\(h\\)"),
        ("<p>a subscript x_{ij} as typed</p>", "x_{ij}"),
        ("<p>$$D = 1$$</p>", "$$D = 1$$"),
    ]
    page = write_page(tmp_path, "math.html", GOOD + "".join(m for m, _ in cases))
    problems = bc.check_page(chrome, page, 1400)
    assert len(problems) == len(cases), problems
    for (_, text), p in zip(cases, problems):
        assert p.startswith("math.html at 1400 px: unrendered math in <p>") and repr(text)[1:-1] in p, (text, p)


@pytest.mark.skipif(MATHJAX is None, reason="sphinx-mathjax-offline's MathJax is part of requirements.txt")
def test_math_that_mathjax_renders_passes_and_a_price_is_text(chrome, tmp_path):
    """The book's own MathJax (sphinx-mathjax-offline, loaded from a local file) typesets Sphinx's math spans; the
    check waits for it and finds nothing raw. A price and LaTeX in code are text."""
    head = f'<script defer src="{MATHJAX.as_uri()}"></script>'
    article = ('<p>The distance <span class="math notranslate nohighlight">\\(\\mathrm{CD} = \\tfrac12\\big(a + '
               'b\\big)\\)</span> costs $50.</p><div class="math notranslate nohighlight">\\[D_{i,j} = c_{ij}\\]'
               '</div><p>Use <code>\\tfrac12</code>.</p>')
    page = write_page(tmp_path, "mj.html", article, head=head)
    assert bc.check_page(chrome, page, 1400) == []
    # the same spans without MathJax stay raw, and are reported
    problems = bc.check_page(chrome, write_page(tmp_path, "nomj.html", article), 1400)
    assert len(problems) == 2 and all("unrendered math" in p for p in problems), problems


# --- tables that fit their column (issue 27) --------------------------------------------------------------------

STATIC = Path(__file__).resolve().parents[1] / "book" / "_static"
WIDE_TABLE = ("<figure class=\"ink-table-figure\"><figcaption>Table 1: eleven columns</figcaption>"
              "<div class=\"ink-table-wrap scroll\"><table class=\"ink-table\"><thead><tr><th>system</th>"
              + "".join(f"<th>Chamfer (valid only) {k}</th>" for k in range(10)) + "</tr></thead><tbody>"
              + "".join("<tr><td>Skeleton derenderer (InkSight stand-in)</td>"
                        + "<td>0.287 [0.282, 0.291]</td>" * 10 + "</tr>" for _ in range(3))
              + "</tbody></table></div></figure>")


def test_a_table_wider_than_its_column_is_reported(chrome, tmp_path):
    page = write_page(tmp_path, "wt.html", WIDE_TABLE.replace('class="ink-table"',
                                                              'class="ink-table" style="width:1600px"'))
    for width in (1400, 420):
        problems = bc.check_page(chrome, page, width)
        assert len(problems) == 1, problems
        assert re.fullmatch(rf"wt\.html at {width} px: table 'Table 1: eleven columns' is \d+ px wider than its "
                            r"column \(it clips or scrolls\)", problems[0]), problems


def test_a_word_broken_inside_a_header_or_cell_is_reported_but_a_break_after_a_hyphen_is_not(chrome, tmp_path):
    squeezed = ('<table style="width:120px"><thead><tr><th style="word-break:break-all">DTW</th>'
                '<th style="overflow-wrap:anywhere">Style</th></tr></thead><tbody><tr>'
                '<td style="overflow-wrap:anywhere">0.287</td><td>Gemini-3.1-Pro</td></tr></tbody></table>')
    head = "<style>th, td { padding: 0 }</style>"
    page = write_page(tmp_path, "sq.html", f'<div style="width:60px">{squeezed}</div>', head=head)
    problems = bc.check_page(chrome, page, 420)
    assert len(problems) == 1 and "table 'headed DTW | Style' breaks 2 word(s) inside" in problems[0], problems
    for part in ("header 'D", "cell '0."):
        assert part in problems[0], problems
    assert "Gemini" not in problems[0]  # broken after a hyphen: between word parts


@pytest.mark.parametrize("width", [1400, 420])
def test_the_books_css_and_script_fit_a_wide_table_without_breaking_a_word(chrome, tmp_path, width):
    """book/_static/inkground.css keeps words whole (the prose rules let a cell break anywhere: 'DT W', 'te xt'),
    and inkground.js sets a table that is still too wide tighter, or one block per row under its column labels."""
    head = (f'<link rel="stylesheet" href="{(STATIC / "inkground.css").as_uri()}">'
            f'<script src="{(STATIC / "inkground.js").as_uri()}"></script>')
    markdown_table = ('<div class="pst-scrollable-table-container scroll"><table class="table"><thead><tr>'
                      '<th>field</th><th>type</th><th>required</th><th>meaning</th></tr></thead><tbody><tr>'
                      '<td><code class="docutils literal"><span class="pre">schema_version</span></code></td>'
                      '<td>integer</td><td>yes</td><td>always <code class="docutils literal"><span class="pre">1'
                      '</span></code>, the format version</td></tr></tbody></table></div>')
    page = write_page(tmp_path, "fitted.html", "<p>Tables.</p>" + WIDE_TABLE + markdown_table, head=head)
    assert bc.check_page(chrome, page, width) == []
    problems: list[str] = []
    with bc._open(chrome, page, width, problems, "fitted") as p:
        cls = p.eval_on_selector("table.ink-table", "t => t.className")
        labels = p.eval_on_selector_all("table.ink-table td .ig-l", "ls => ls.map(l => l.textContent)")
    if width == 420:
        assert "ig-stacked" in cls and labels[1] == "Chamfer (valid only) 0", (cls, labels[:3])
    else:
        assert "ig-stacked" not in cls


# --- players that play where the reader looks (issue 27) --------------------------------------------------------

def far_page(tmp_path, svg: str, name: str = "far.html") -> Path:
    return write_page(tmp_path, name, '<p>The first screen.</p><div style="height:3000px">a long section</div>'
                      + player_figure(svg))


def test_a_far_player_waits_plays_in_view_and_replays(chrome, tmp_path):
    svg = pen_path_svg([(zigzag(), "prediction")], fig_id="far", total_ms=4000)
    assert bc.check_player_in_view(chrome, far_page(tmp_path, svg)) == []


def test_a_player_that_plays_at_load_and_cannot_replay_is_reported(chrome, tmp_path):
    """A player without the script (as every player was before issue 27) plays at once, far out of view, and a
    click on it once finished does nothing."""
    svg = pen_path_svg([(zigzag(), "prediction")], fig_id="eager", total_ms=4000, controls=False)
    problems = bc.check_player_in_view(chrome, far_page(tmp_path, svg))
    who = "the pen-path player #eager"
    assert any(p.startswith("far.html at 1400 px: " + who) and "advances out of view" in p for p in problems), problems
    assert any(p.startswith(f"far.html at 1400 px: a click on it does not replay {who}") for p in problems), problems
    assert any(f"{who}" in p and "has no visible replay control (.rp)" in p for p in problems), problems
    # finished before the reader got there: a short drawing on a slow page
    quick = pen_path_svg([(zigzag(), "prediction")], fig_id="quick", total_ms=200, controls=False)
    problems = bc.check_player_in_view(chrome, far_page(tmp_path, quick, "quick.html"))
    assert any("played before it came into view" in p for p in problems), problems
    assert any("does not advance once scrolled into view" in p for p in problems), problems


def test_a_page_without_a_far_player_is_reported(chrome, tmp_path):
    page = write_page(tmp_path, "near.html", GOOD)
    assert bc.check_player_in_view(chrome, page) == ["near.html at 1400 px: no pen-path player starts 1.5 screens or "
                                                     "more down the page (1 players)"]
