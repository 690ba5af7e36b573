"""How large the book's figures' smallest text shows in Chromium at a 420 px and a 1400 px window (issue 45).

    python benchmarks/bench_figure_legibility.py BUILT_HTML_DIR [--replace]

1. Draws the 14 figures of the book with this checkout's figure functions on small fixed inputs (a generated
   one-page synthetic set, a two-page recorded set, section 02's pipeline on it, a summary shaped like section
   03's, the shipped tracer curves) and records each one's smallest text (points) and its width saved as the
   notebooks save it (PNG, 100 dpi, bbox_inches="tight").
2. Opens the built book's section pages (a copy of BUILT_HTML_DIR's pages, theme and images; with --replace the
   copy's figure images are this checkout's drawings) in headless Chromium at 420 and 1400 px and reads, per
   "Fig. N", the image's natural and shown width.
3. Prints per figure: smallest text in pt, image width, shown width and the smallest text in CSS px
   (pt * 100 / 72 * shown / natural) at each window width, and the figures under 9 CSS px.

Without --replace, step 2 measures the built book's own images (drawn by the code that built it); step 1's text
sizes are then those of this checkout's code, so run it from a checkout of the commit that built the book.
Uses only the library, Pillow, matplotlib and Playwright on the system Chromium; writes only under a temporary
folder. Needs nothing of the network.
"""

from __future__ import annotations

import io
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

DPI = 100
MIN_CSS_PX = 9.0
PAGES = {"01_dataset_statistics": (1, 2, 3), "02_pseudo_labels": (4, 5, 6, 7, 8),
         "03_model_evaluation": (9, 10, 11), "04_tradeoffs": (12, 13), "tracer": (14,)}
FIGURES_JS = """() => { const art = document.querySelector('article.bd-article') || document.body;
  return [...art.querySelectorAll('figure')].filter(f => f.querySelector('img') && f.querySelector('.caption-number'))
    .map(f => { const img = f.querySelector('img');
      return [f.querySelector('.caption-number').textContent.trim(), img.getAttribute('src'), img.naturalWidth,
              img.getBoundingClientRect().width]; }); }"""


def smallest_text(fig) -> tuple[float, int, bytes]:
    """(smallest visible text in points, saved width in px, the PNG) of a matplotlib figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    if not hasattr(fig.canvas, "print_png"):
        FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    png = buf.getvalue()
    texts = [t for t in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontsize"))
             if t.get_visible() and str(t.get_text()).strip() and (t.axes is None or t.axes.get_visible())]
    return min(t.get_fontsize() for t in texts), Image.open(io.BytesIO(png)).size[0], png


def image_scale(fig) -> float:
    """The largest scale (figure px per image px) at which ``fig`` draws an image: for Fig. 9, how large the
    prompt grid's numbers come out (the whole image, or the enlarged corner)."""
    fig.canvas.draw()
    best = 0.0
    for ax in fig.axes:
        for im in ax.get_images():
            x0, x1 = sorted(ax.get_xlim())
            best = max(best, ax.get_window_extent().width * DPI / fig.dpi / max(x1 - x0, 1.0))
    return best


def book_figures(work: Path) -> dict[int, object]:
    """Fig. number -> the figure this checkout draws for it, on small fixed inputs."""
    import numpy as np
    import pandas as pd

    from inkground_lib.analysis.tradeoffs import paper_points
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.core.ink import Ink
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.datasets.recorded import build_recorded
    from inkground_lib.datasets.statistics import page_table, word_table
    from inkground_lib.datasets.synth.generate import SynthParams, generate
    from inkground_lib.pseudo.derenderer_comparison import derenderer_comparison
    from inkground_lib.pseudo.run import run_pseudo_labels
    from inkground_lib.report import dataset_stats as d01
    from inkground_lib.report import derenderer_figures as d02
    from inkground_lib.report import evaluation as e03
    from inkground_lib.report import pseudo_figures as p02
    from inkground_lib.report.tracer_page import fig_curves, read_curves
    from inkground_lib.report.tradeoffs import fig_tradeoffs
    from test_tradeoffs import _summary_like_section_03

    ds = load_dataset(generate(work / "ds", SynthParams(pages=1, words_min=3, words_max=3, words_mean=3, width=500,
                                                        height=600), progress=False))
    rec = load_dataset(build_recorded(work / "rec", pages=2, words_per_page=(4, 5), progress=False))
    res = run_pseudo_labels(ds.root, work / "run02", progress=False, workers=1)
    derenderer_comparison({"recorded": rec}, ["skeleton", "tracer"], work / "cmp", n_boot=0)
    pages, words = page_table(ds), word_table(ds)
    figs = {1: d01.fig_dataset_histograms(pages, words, rec_pages=page_table(rec), rec_words=word_table(rec)),
            2: d01.fig_pages_with_boxes(ds, [ds.pages[0].id] * 2),  # the book shows two example pages
            3: d01.fig_pages_with_boxes(rec, [rec.pages[0].id]),
            4: p02.fig_funnel(res), 5: p02.fig_example_pairs(res, ds, n_per_row=3), 6: p02.fig_truth_by_stage(res),
            7: p02.fig_truth_examples(res, ds),
            8: d02.fig_derenderer_examples(d02.derenderer_examples(rec, "recorded", ("skeleton", "tracer"),
                                                                   work / "cmp"))}
    _, images = e03.prompt_example(rec)
    figs[9] = e03.fig_images(images, ["image 1: the in-context example", "image 2: the page to trace on"])
    ws = [w for p in ds.pages for w in p.words]

    class Run:
        def __init__(self, name, inks):
            self.name, self.label, self.inks = name, name.title(), inks

    shifted = [Ink([s + np.array([3.0, 1.0] + [0.0] * (s.shape[1] - 2)) for s in w.ink.strokes]) for w in ws]
    runs = {"reference": Run("reference", [w.ink for w in ws])}
    rows = [{"system": "reference", "word_id": w.id, "page_id": ds.pages[0].id, "dtw": 0.0, "ocr_text": w.text}
            for w in ws]
    for k, name in enumerate(("font", "skeleton", "box")):
        runs[name] = Run(name, shifted)
        rows += [{"system": name, "word_id": w.id, "page_id": ds.pages[0].id, "dtw": 0.1 * (i + 1) + k,
                  "ocr_text": f"read{i}"} for i, w in enumerate(ws)]
    figs[10] = figs[11] = e03.fig_galleries(ds, pd.DataFrame(rows), runs)
    rep, summ = paper_numbers(), _summary_like_section_03()
    figs[12] = fig_tradeoffs(summ, paper_points(rep), y="dtw")
    figs[13] = fig_tradeoffs(summ, paper_points(rep), y="style", reported=rep)
    figs[14] = fig_curves(read_curves())
    return figs


def shown_widths(html: Path) -> dict[int, tuple[str, int, float, float]]:
    """Fig. number -> (image src, natural width, shown width at 420 px, at 1400 px) in Chromium."""
    from inkground_lib.publish.chromium import browser

    out: dict[int, list] = {}
    with browser() as b:
        for width in (420, 1400):
            ctx = b.new_context(viewport={"width": width, "height": 900})
            page = ctx.new_page()
            for name in PAGES:
                page.goto((html / "book" / "sections" / f"{name}.html").as_uri(), wait_until="load")
                page.wait_for_timeout(200)
                for cap, src, natural, shown in page.evaluate(FIGURES_JS):
                    n = int(re.search(r"\d+", cap).group())
                    out.setdefault(n, [src, natural, None, None])[2 if width == 420 else 3] = shown
                    out[n][1] = natural
            ctx.close()
    return {n: tuple(v) for n, v in out.items()}


def main(argv: list[str]) -> int:
    import matplotlib

    matplotlib.use("Agg")
    built = Path(argv[0]).resolve()
    replace = "--replace" in argv
    with tempfile.TemporaryDirectory(prefix="ig-legibility-") as tmp:
        tmp = Path(tmp)
        html = tmp / "html"
        for part in ("_static", "_images", "book"):
            shutil.copytree(built / part, html / part)
        figs = book_figures(tmp / "work")
        measured = {n: smallest_text(f) for n, f in figs.items()}
        grid_scale = image_scale(figs[9])
        before = shown_widths(html)
        if replace:  # the copy's figure images become this checkout's drawings
            for n, (src, *_rest) in before.items():
                if n in measured:
                    (html / "book" / "sections" / src).resolve().write_bytes(measured[n][2])
        shown = shown_widths(html)
    print(f"{'figure':>8} {'pt':>5} {'png px':>7} {'shown@420':>10} {'shown@1400':>11} {'CSS px@420':>11} "
          f"{'CSS px@1400':>12}")
    low = []
    for n in sorted(shown):
        _, natural, s420, s1400 = shown[n]
        pt = measured[n][0]
        px = [pt * DPI / 72 * s / natural for s in (s420, s1400)]
        print(f"Fig. {n:>3} {pt:5.1f} {natural:7d} {s420:10.0f} {s1400:11.0f} {px[0]:11.1f} {px[1]:12.1f}")
        low += [f"Fig. {n} at {w} px: {v:.1f}" for w, v in zip((420, 1400), px) if v < MIN_CSS_PX]
    from inkground_lib.evaluation.prompt import DEFAULT_FONT_SIZE

    _, natural, s420, s1400 = shown[9]
    grid = [DEFAULT_FONT_SIZE * grid_scale * s / natural for s in (s420, s1400)]
    print(f"Fig. 9's grid numbers ({DEFAULT_FONT_SIZE} px in the prompt image, drawn at {grid_scale:.2f} figure px "
          f"per image px): {grid[0]:.1f} CSS px at 420, {grid[1]:.1f} at 1400")
    low += [f"Fig. 9's grid numbers at {w} px: {v:.1f}" for w, v in zip((420, 1400), grid) if v < MIN_CSS_PX]
    print(f"under {MIN_CSS_PX:g} CSS px: {', '.join(low) if low else 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
