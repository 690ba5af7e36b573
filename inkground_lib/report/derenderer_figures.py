"""Section 02's pictures of the derenderers side by side: on the same words, each derenderer's strokes over the
writer's true pen path (static, and as players that draw in pen order)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

import pandas as pd

from inkground_lib.core.dataset import Dataset, load_dataset
from inkground_lib.core.render import crop_box
from inkground_lib.core.run_files import derenderers_dir
from inkground_lib.pseudo.derenderer_comparison import CANDIDATES_SET, RECORDED_SET, derender_set
from inkground_lib.report.derenderer_table import derenderer_label
from inkground_lib.report.escape import figure_text
from inkground_lib.report.palette import PREDICTION, TRUTH

EXAMPLE_TAGS = ("largest gain", "median", "largest loss")
"""The words shown: where the second derenderer's DTW to the truth is lowest relative to the first's, the median
difference, and where it is highest (so the pictures show its failures as well as its successes)."""


def derenderer_examples(ds: Dataset, set_name: str, derenderers: tuple[str, str], run_dir: str | os.PathLike,
                        cache_dir: str | os.PathLike | None = None, ocr="rapidocr") -> list[dict]:
    """Three words of ``ds`` chosen by the per-word DTW difference (second minus first derenderer, from the
    comparison's ``words-<name>.csv``; ties by word id): :data:`EXAMPLE_TAGS`. Each a dict: tag, word, word_id,
    dtw (derenderer spec -> DTW, word heights), inks (spec -> Ink, page pixels), truth, box, crop. Empty when
    the comparison has no per-word table for the set. The inks are the comparison's own, read from its cache
    (``ocr``: the engine whose crop readings a derenderer that reads the word was given)."""
    a, b = derenderers
    folder = derenderers_dir(run_dir) / set_name
    try:
        wa, wb = (pd.read_csv(folder / f"words-{d}.csv", dtype={"page": str, "word_id": str}) for d in (a, b))
    except FileNotFoundError:
        return []
    w = wa[["page", "word_id", "dtw"]].merge(wb[["word_id", "dtw"]], on="word_id", suffixes=("_a", "_b"))
    w = w.dropna()
    if w.empty:
        return []
    w["gain"] = w["dtw_b"] - w["dtw_a"]
    w = w.sort_values(["gain", "word_id"], kind="stable").reset_index(drop=True)
    cache = Path(cache_dir) if cache_dir else folder
    inks = {d: derender_set(ds, d, cache, ocr=ocr, workers=1)[0] for d in derenderers}
    out = []
    for tag, i in zip(EXAMPLE_TAGS, (0, len(w) // 2, len(w) - 1)):
        r = w.iloc[i]
        page = ds.page(r["page"])
        word = next(x for x in page.words if x.id == r["word_id"])
        box = crop_box(word.box, (page.width, page.height), margin=0.3)
        out.append({"tag": tag, "word": word.text, "word_id": word.id, "dtw": {a: float(r["dtw_a"]), b: float(r["dtw_b"])},
                    "inks": {d: inks[d][word.id] for d in derenderers}, "truth": word.true_ink, "box": tuple(box),
                    "crop": page.load_image()[box[1]:box[3], box[0]:box[2]]})
    return out


def fig_derenderer_examples(examples: list[dict]):
    """:func:`derenderer_examples` drawn, one row per word, one column per derenderer (headed by its label,
    wrapped to the column): its strokes solid vermillion over the writer's true pen path dashed green (dots at
    stroke starts, arrowheads in the pen's direction), each panel titled with the word and its DTW to the truth
    in word heights. The figure is :data:`~inkground_lib.report.legibility.FIGURE_WIDTH_IN` wide whatever the
    number of derenderers, so its text stays legible on a phone. None without examples."""
    import matplotlib.pyplot as plt

    from inkground_lib.report.legibility import FIGURE_TEXT_PT, FIGURE_WIDTH_IN, wrap_to
    from inkground_lib.report.overlay import plot_comparison

    if not examples:
        return None
    ders = list(examples[0]["inks"])
    col_in = FIGURE_WIDTH_IN / len(ders)
    fig = plt.figure(figsize=(FIGURE_WIDTH_IN, 2.2 * len(examples) + 0.9), layout="constrained")
    columns = fig.subfigures(1, len(ders), squeeze=False)[0]
    heads = [wrap_to(derenderer_label(d), col_in) for d in ders]
    lines = max(h.count("\n") for h in heads)
    handles = []
    for sub, d, head in zip(columns, ders, heads):  # headers padded to one height: the rows line up
        sub.suptitle(figure_text(head + "\n" * (lines - head.count("\n"))), fontsize=FIGURE_TEXT_PT,
                     fontweight="bold", va="top")
        for ax, e in zip(sub.subplots(len(examples), 1, squeeze=False)[:, 0], examples):
            handles = plot_comparison(ax, e["inks"][d], e["truth"], image=e["crop"], extent_box=e["box"],
                                      prediction_label="derendered", reference_label="writer's true pen path",
                                      reference_colour=TRUTH, legend=False) or handles
            ax.set_title(figure_text(wrap_to(f"{e['tag']}: '{e['word']}', DTW {e['dtw'][d]:.3f}", col_in)),
                         fontsize=FIGURE_TEXT_PT)
            ax.set_axis_off()
    fig.legend(handles=handles, loc="outside upper center", ncols=2, fontsize=FIGURE_TEXT_PT, frameon=False)
    return fig


def derenderer_players(examples: list[dict], width_px: float = 260):
    """The same words as players, one per word and derenderer (the derendered strokes solid, the true pen path
    dashed, drawn in pen order); a :class:`~inkground_lib.report.player.PlayerGrid`, or None."""
    from inkground_lib.report.player import PLAY_HINT, PlayerGrid, pen_path_svg, player_figure

    if not examples:
        return None
    figs = []
    for e in examples:
        for d, ink in e["inks"].items():
            title = f"{e['tag']} word '{e['word']}': {derenderer_label(d)} and the writer's true pen path, in pen order"
            svg = pen_path_svg([(e["truth"], "writer's true pen path", TRUTH, True),
                                (ink, derenderer_label(d), PREDICTION, False)], width_px=width_px, title=title,
                               photo=(e["crop"], e["box"][:2]),
                               fig_id=re.sub(r"[^A-Za-z0-9_-]", "-", f"dr-{d}-{e['word_id']}"))
            figs.append(player_figure(svg, f"{e['tag']}: '{e['word']}', {derenderer_label(d)}, DTW {e['dtw'][d]:.3f}"))
    return PlayerGrid(figs, "The same words traced by each derenderer, drawn as the pen moved: the writer's true pen "
                            f"path dashed green, the derenderer's strokes solid vermillion. {PLAY_HINT}")


def section_examples(candidates: Dataset, recorded: str | os.PathLike | None, derenderers: Sequence[str],
                     run_dir: str | os.PathLike, ocr="rapidocr") -> list[dict]:
    """Section 02's pictures: :func:`derenderer_examples` of the first two ``derenderers`` on the recorded pages
    when section 02 compared them (real handwriting), else on its candidate pages (cached in the run folder)."""
    if len(derenderers) < 2:
        return []
    a, b = derenderers[0], derenderers[1]
    if recorded:
        return derenderer_examples(load_dataset(recorded), RECORDED_SET, (a, b), run_dir, ocr=ocr)
    return derenderer_examples(candidates, CANDIDATES_SET, (a, b), run_dir, cache_dir=run_dir, ocr=ocr)
