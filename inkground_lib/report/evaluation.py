"""Section 03's figures, tables and prose: galleries, the prompt, the systems compared, the summary sentence and
the numbers the section's prose cites."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from inkground_lib.analysis.ties import SHOWN_DECIMALS, leaders, shown
from inkground_lib.analysis.tradeoffs import reference_flips
from inkground_lib.core.defaults import GRID
from inkground_lib.core.ink import Ink
from inkground_lib.core.metric_table import METRICS, metric_names
from inkground_lib.core.render import crop_box
from inkground_lib.evaluation.items import make_items
from inkground_lib.evaluation.prompt import render_request_markdown, request_images
from inkground_lib.evaluation.systems.registry import load_registry, system_kind
from inkground_lib.report.escape import figure_text
from inkground_lib.report.format import join_names, missing, value_with_interval
from inkground_lib.report.overlay import plot_comparison
from inkground_lib.report.palette import PREDICTION, REFERENCE
from inkground_lib.report.player import PLAY_HINT, PlayerGrid, pen_path_svg, player_figure
from inkground_lib.report.table_view import table_view
from inkground_lib.report.tradeoffs import flips_text

GALLERY_TAGS = ("best", "median", "worst")


@dataclass
class GalleryEntry:
    """One panel of a gallery: a system's word picked by DTW rank, with what is drawn."""

    system: str
    label: str
    tag: str  # "best", "median" or "worst"
    word_text: str
    word_id: str
    dtw: float  # word heights
    ocr: str  # what OCR read from the rendered prediction ("" when nothing)
    prediction: object  # Ink or None (page pixels)
    reference: object  # Ink (page pixels)
    box: tuple  # crop box in page pixels (x0, y0, x1, y1)
    crop: object  # the page photo's pixels inside ``box``


def identical_to_reference(scores: pd.DataFrame, name: str) -> bool:
    """True when every word of system ``name`` scores DTW 0: its inks are the references themselves (the
    reference ink, or the derenderer that made the pseudo-labels), so its gallery row shows nothing new."""
    d = scores.loc[scores["system"] == name, "dtw"]
    return len(d) > 0 and bool((shown(d.fillna(1.0)) == 0).all())


def gallery_entries(ds, scores: pd.DataFrame, runs: dict, *, reference: str = "reference",
                    margin: float = 0.35) -> tuple[list[GalleryEntry], list[str]]:
    """The best, median and worst word by DTW of every system in ``runs`` that has scores, except the
    systems :func:`identical_to_reference`; returns (entries in system order, names left out)."""
    words = {w.id: (p, w) for p in ds.pages for w in p.words}
    index = {w.id: i for i, w in enumerate(ww for p in ds.pages for ww in p.words)}
    entries, skipped = [], []
    images = {}
    for name, run in runs.items():
        if not (scores["system"] == name).any():
            continue
        if identical_to_reference(scores, name):
            skipped.append(getattr(run, "label", name))
            continue
        s = scores[scores["system"] == name].reset_index(drop=True)
        order = s["dtw"].sort_values(kind="stable").index.tolist()
        for tag, i in zip(GALLERY_TAGS, (order[0], order[len(order) // 2], order[-1])):
            row = s.loc[i]
            page, word = words[row["word_id"]]
            box = crop_box(word.box, (page.width, page.height), margin=margin)
            if page.id not in images:
                images[page.id] = page.load_image()
            ocr = row.get("ocr_text")
            ocr = "" if ocr is None or ocr is pd.NA or (isinstance(ocr, float) and math.isnan(ocr)) else str(ocr)
            entries.append(GalleryEntry(name, run.label, tag, word.text, word.id, float(row["dtw"]), ocr,
                                        run.inks[index[word.id]],
                                        word.true_ink if reference == "true" else word.ink, tuple(box),
                                        images[page.id][box[1]:box[3], box[0]:box[2]]))
    return entries, skipped


def reference_name(reference: str) -> str:
    return "recorded pen path" if reference == "true" else "pseudo-label reference"


def fig_galleries(ds, scores: pd.DataFrame, runs: dict, *, reference: str = "reference"):
    """Best, median and worst words by DTW, one row per system that ran, headed by its name (systems whose inks are the
    references themselves are left out: :func:`identical_to_reference`). Each panel: the page crop, the
    reference dashed blue, the prediction solid vermillion, dots at stroke starts and arrowheads pointing
    the pen's direction (:func:`inkground_lib.report.overlay.plot_comparison`); one key for the figure.
    Titles give the word, DTW (word heights) and what OCR read from the rendered prediction; the figure is
    :data:`~inkground_lib.report.legibility.FIGURE_WIDTH_IN` wide (legible on a phone)."""
    import matplotlib.pyplot as plt  # (only where a figure is drawn)

    entries, _ = gallery_entries(ds, scores, runs, reference=reference)
    if not entries:
        return None
    from inkground_lib.report.legibility import FIGURE_TEXT_PT, FIGURE_WIDTH_IN, wrap_to

    by_system: dict[str, list] = {}
    for e in entries:
        by_system.setdefault(e.system, []).append(e)
    fig = plt.figure(figsize=(FIGURE_WIDTH_IN, 2.4 * len(by_system) + 0.5), layout="constrained")
    handles = []
    for sub, (system, row) in zip(fig.subfigures(len(by_system), 1, squeeze=False)[:, 0], by_system.items()):
        sub.suptitle(figure_text(system), fontsize=FIGURE_TEXT_PT, fontweight="bold")
        for ax, e in zip(sub.subplots(1, 3, squeeze=False)[0], row):
            handles = plot_comparison(ax, e.prediction, e.reference, image=e.crop, extent_box=e.box,
                                      prediction_label="prediction", reference_label=reference_name(reference),
                                      legend=False) or handles
            ax.set_title(figure_text(wrap_to(f"{e.tag}: '{e.word_text}'\nDTW {e.dtw:.3f}\nOCR read '{e.ocr}'",
                                             FIGURE_WIDTH_IN / 3)), fontsize=FIGURE_TEXT_PT)
            ax.set_axis_off()
    if handles:
        fig.legend(handles=handles, loc="outside upper center", ncols=len(handles), fontsize=FIGURE_TEXT_PT,
                   frameon=False)
    return fig


def player_gallery(ds, scores: pd.DataFrame, runs: dict, *, reference: str = "reference", width_px: float = 300):
    """The words of :func:`fig_galleries` as pen paths that play (:mod:`inkground_lib.report.player`): each
    prediction (solid vermillion) and its reference (dashed blue) drawn stroke by stroke in pen order over
    the page crop, durations proportional to arc length. Returns a
    :class:`~inkground_lib.report.player.PlayerGrid`, or None when no system has a row."""
    entries, _ = gallery_entries(ds, scores, runs, reference=reference)
    if not entries:
        return None
    ref_label = reference_name(reference)
    figs = []
    for e in entries:
        pred = e.prediction if e.prediction is not None else Ink([])
        title = f"{e.label}, {e.tag} word '{e.word_text}': prediction and {ref_label}, drawn in pen order"
        svg = pen_path_svg([(e.reference, ref_label, REFERENCE, True), (pred, "prediction", PREDICTION, False)],
                           width_px=width_px, title=title, photo=(e.crop, e.box[:2]),
                           fig_id=re.sub(r"[^A-Za-z0-9_-]", "-", f"pp-{reference}-{e.system}-{e.tag}"))
        figs.append(player_figure(svg, f"{e.label}, {e.tag}: '{e.word_text}', DTW {e.dtw:.3f}"))
    return PlayerGrid(figs, f"Pen paths that play: each system's best, median and worst word by DTW "
                            f"(word heights), prediction solid, {ref_label} dashed. {PLAY_HINT}")


def systems_table(systems, registry: dict | None = None) -> pd.DataFrame:
    """The systems of section 03, one row each from the registry (no system is built, no key is needed): name,
    label, kind, model, how its answers are sampled and why (the registry's ``sampling``) and the requests per
    minute the client paces it to (``rpm``); "-" where the registry gives none (local systems, self-hosted
    servers)."""

    reg = registry if registry is not None else load_registry()
    rows = []
    for name in systems:
        kind = system_kind(name, reg)  # an unknown name raises, naming the known ones
        cfg = reg[name]
        rows.append({"system": name, "label": cfg.get("label") or name, "kind": kind,
                     "model": cfg.get("model") or "-", "sampling": cfg.get("sampling") or "-",
                     "rpm": cfg.get("rpm") or "-"})
    return pd.DataFrame(rows, columns=["system", "label", "kind", "model", "sampling", "rpm"])


def prompt_example(ds, grid: int = GRID, variant: str = "two-image"):
    """The exact request sent to every VLM for the first word of ``ds`` (the book shows its text and
    images): returns (markdown of the text parts, list of decoded images)."""
    item = make_items(ds, with_prompt=True, grid=grid)[0]
    req = item.request_for(variant)
    return render_request_markdown(req), request_images(req)


CORNER_PX = 200
"""The side (image pixels) of the corner :func:`fig_images` shows enlarged beside each prompt image: small enough
that the grid's numbers (drawn :data:`~inkground_lib.evaluation.prompt.DEFAULT_FONT_SIZE` px high in the image)
show at >= 9 CSS px on a phone (test)."""


def fig_images(images, titles=None, corner_px: int = CORNER_PX):
    """The prompt's images as the book shows them (the images themselves, as sent to the model, are not
    changed): one image a row, whole on the left with its lower-left corner (``corner_px`` square, framed)
    enlarged on the right, so that the grid's row and column numbers can be read on any screen. The figure is
    :data:`~inkground_lib.report.legibility.FIGURE_WIDTH_IN` wide; ``titles`` name the images."""
    import matplotlib.pyplot as plt  # (only where a figure is drawn)
    from matplotlib.patches import Rectangle

    from inkground_lib.report.legibility import FIGURE_TEXT_PT, FIGURE_WIDTH_IN, wrap_to

    whole_in, corner_in = FIGURE_WIDTH_IN * 0.54, FIGURE_WIDTH_IN * 0.46
    # each row as tall as its whole image and at least as tall as the square corner is wide
    heights = [max(whole_in * np.asarray(im).shape[0] / np.asarray(im).shape[1], corner_in) for im in images]
    fig, axes = plt.subplots(len(images), 2, figsize=(FIGURE_WIDTH_IN, sum(heights) + 0.7 * len(images)),
                             squeeze=False, layout="constrained", width_ratios=[whole_in, corner_in],
                             height_ratios=heights)
    for k, ((ax, zoom), im) in enumerate(zip(axes, images)):
        im = np.asarray(im)
        h, w = im.shape[:2]
        c = min(corner_px, h, w)
        ax.imshow(im)
        ax.add_patch(Rectangle((-0.5, h - c - 0.5), c, c, fill=False, ec=PREDICTION, lw=1.5))
        zoom.imshow(im[h - c:, :c], interpolation="nearest")
        for a in (ax, zoom):
            a.set_axis_off()
        name = titles[k] if titles else f"image {k + 1}"
        ax.set_title(figure_text(wrap_to(name, whole_in)), fontsize=FIGURE_TEXT_PT)
        zoom.set_title(figure_text(wrap_to("its lower-left corner (framed), enlarged", corner_in)),
                       fontsize=FIGURE_TEXT_PT)
    return fig


def both_sides_table(res) -> pd.DataFrame:
    """Section 03's "both sides" table (:func:`inkground_lib.evaluation.both_sides.both_sides`): each
    derenderer against its own labels, the other's and the truth; DTW and Chamfer in reference word heights
    with 95% page-bootstrap intervals, at a precision that tells the bounds apart."""
    t = res.table
    out = pd.DataFrame({"derenderer": t["derenderer"], "scored against": t["scored against"],
                        "words": t["n_words"]})
    rows = t.to_dict("records")
    for m in (m for m in metric_names(computed="geometry") if m in t.columns):  # both_sides scores these
        out[METRICS[m].label] = [value_with_interval(r, m) for r in rows]
    return out.set_index(["derenderer", "scored against"])


def systems_view(systems, caption: str, registry: dict | None = None):
    """:func:`systems_table` as the book shows it (captioned, human column names, wrapped)."""
    t = systems_table(systems, registry).set_index("system")
    return table_view(t, caption, columns={"rpm": "requests per minute", "kind": "kind of system"}, fold=False)


def both_sides_view(res, caption: str):
    """:func:`both_sides_table` as the book shows it."""
    return table_view(both_sides_table(res).reset_index().set_index("derenderer"), caption, fold=False)


def summary_text(bench, bench_true, rec=None) -> str:
    """The section-03 summary sentence, from the runs' summaries (``EvalResult``-like objects with
    ``summary``, ``runs`` and ``unavailable``): the systems that ran, which leads on DTW and on AR among those
    that are not the references themselves, how far the pseudo-labels are from the truth, and what did not
    run; then every ranking the choice of reference reverses with 95% intervals apart (pseudo-labels against
    the writers' true trajectories: :func:`inkground_lib.analysis.tradeoffs.reference_flips`, worded by
    :func:`inkground_lib.report.tradeoffs.flips_text`), or that none does. Numbers are means over words (DTW in
    word heights) or corpus rates (AR)."""
    s = bench.summary
    scored = s[~s["system"].isin(["reference"]) & (shown(s["dtw"].fillna(1.0)) != 0)] if len(s) else s
    parts = []
    ran = [getattr(r, "label", n) for n, r in bench.runs.items() if n != "reference"]
    parts.append(f"{len(ran)} system{'s' if len(ran) != 1 else ''} ran here ({', '.join(ran) if ran else 'none'})")
    if len(scored):
        out = [str(r.get("label", r["system"])) for _, r in s.iterrows() if r["system"] not in set(scored["system"])]
        parts.append((f"leaving out {join_names(out)} (mean DTW against the references {0:.{SHOWN_DECIMALS}f} as "
                      f"shown), " if out else "")
                     + leader_phrase(scored, "dtw", "lowest mean DTW on the benchmark set against its pseudo-labels",
                                     " word heights")
                     + " and " + leader_phrase(scored, "ar", "highest AR"))
    t = bench_true.summary
    ref = t[t["system"] == "reference"]
    if len(ref) and ref["dtw"].iloc[0] == ref["dtw"].iloc[0]:
        parts.append(f"the pseudo-label references themselves lie at a mean DTW of {ref['dtw'].iloc[0]:.3f} word "
                     f"heights from the writers' true trajectories")
    else:
        parts.append(f"the distance of the pseudo-labels to the truth is {missing('not measured')}")
    if rec is not None and len(rec.summary):
        parts.append(f"on the recorded words, {len(rec.summary)} systems were scored against recorded pen paths")
    n_not = len(bench.unavailable)
    parts.append(f"{n_not} system{'s' if n_not != 1 else ''} could not run on this machine ("
                 + ", ".join(sorted(bench.unavailable))
                 + "), so their rows are the paper's numbers as reported, not reproduced here"
                 if n_not else "every named system ran")
    return "; ".join(parts) + ". " + reference_flips_text(bench, bench_true)


def leader_phrase(summary: pd.DataFrame, metric: str, what: str, unit: str = "") -> str:
    """Who leads ``summary`` on ``metric``, ties kept (values equal as shown share the lead:
    :func:`inkground_lib.analysis.ties.leaders`): "Font has the highest AR (0.412)" or "Font and Box share the
    highest AR (0.412)".

    >>> t = pd.DataFrame({"label": ["Font", "Box", "Tracer"], "ar": [0.4121, 0.4118, 0.2]})
    >>> leader_phrase(t, "ar", "highest AR")
    'Font and Box share the highest AR (0.412)'
    """
    v = summary.set_index("label")[metric].astype(float)
    lead = leaders(v, METRICS[metric].lower_is_better)
    if not lead:
        return f"no system has a {what.split(' ', 1)[-1]}"
    verb = "has" if len(lead) == 1 else "share"
    return f"{join_names(lead)} {verb} the {what} ({shown(float(v[lead[0]])):.{SHOWN_DECIMALS}f}{unit})"


def reference_flips_text(bench, bench_true) -> str:
    """What the choice of reference does to the benchmark's rankings (:func:`inkground_lib.report.tradeoffs.
    flips_text` over :func:`inkground_lib.analysis.tradeoffs.reference_flips` of the two summaries)."""
    if bench_true is None or not len(bench.summary) or not len(bench_true.summary):
        return flips_text([], [])
    name = str(getattr(bench, "dataset", "") or "the benchmark set")
    flips = reference_flips(bench.summary.assign(dataset=name), bench_true.summary.assign(dataset=name),
                            getattr(bench, "reference", "reference") or "reference")
    return flips_text(flips, [name])


def headline_numbers(bench, bench_true=None, recorded=None) -> dict:
    """Numbers the section-03 prose cites (``EvalResult``-like objects with ``scores``, ``summary``, ``runs``,
    ``unavailable`` and ``style``), with keys that always exist (NaN where a system or dataset was not run), so a
    rerun with other systems still builds: n_words / n_pages per dataset, systems run and not run (systems_run
    leaves out the reference ink, a sanity check), the specialist's (skeleton derenderer's) DTW against the
    pseudo-labels and against the true trajectories, the font and box baselines' AR, each classifier's chance
    level and top-1 accuracy, and the words the target rule left out of each dataset (bench_non_targets,
    rec_non_targets: :mod:`inkground_lib.components.targets`)."""
    def stat(res, system, col):
        if res is None or not len(res.summary):
            return float("nan")
        row = res.summary[res.summary["system"] == system]
        return float(row[col].iloc[0]) if len(row) else float("nan")

    out = {
        "bench_words": int(bench.scores["word_id"].nunique()) if len(bench.scores) else 0,
        "bench_pages": int(bench.scores["page_id"].nunique()) if len(bench.scores) else 0,
        "systems_run": len([n for n in bench.runs if n != "reference"]),  # the reference ink is a sanity check
        "systems_not_run": len(bench.unavailable),
        "skeleton_dtw_ref": stat(bench, "skeleton", "dtw"), "skeleton_dtw_true": stat(bench_true, "skeleton", "dtw"),
        "reference_dtw_true": stat(bench_true, "reference", "dtw"),
        "font_ar": stat(bench, "font", "ar"), "box_ar": stat(bench, "box", "ar"),
        "skeleton_ar": stat(bench, "skeleton", "ar"), "reference_ar": stat(bench, "reference", "ar"),
        "bench_style_chance": float(bench.style.get("chance", float("nan"))),
        "bench_style_top1": float(bench.style.get("top1", float("nan"))),
        "bench_style_classes": int(bench.style.get("n_classes", 0)),
    }
    rec = recorded
    out.update({
        "rec_words": int(rec.scores["word_id"].nunique()) if rec is not None and len(rec.scores) else 0,
        "rec_pages": int(rec.scores["page_id"].nunique()) if rec is not None and len(rec.scores) else 0,
        "rec_skeleton_dtw": stat(rec, "skeleton", "dtw"), "rec_font_ar": stat(rec, "font", "ar"),
        "rec_style_chance": float(rec.style.get("chance", float("nan"))) if rec is not None else float("nan"),
        "rec_style_top1": float(rec.style.get("top1", float("nan"))) if rec is not None else float("nan"),
        "rec_style_classes": int(rec.style.get("n_classes", 0)) if rec is not None else 0,
    })
    # one target, one question (components.targets): words left out because their text repeats on their page,
    # by the benchmark builder (section 02) and by section 03 itself
    for key, res in (("bench", bench), ("rec", rec)):
        facts = getattr(res, "targets", None) or {}
        out[f"{key}_non_targets"] = int(facts.get("left_out", 0)) + int(facts.get("left_out_by_builder") or 0)
    chance = out["rec_style_chance"]
    out["rec_style_text"] = (f"whose Style classifier chooses among {out['rec_style_classes']} writers (chance "
                             f"{chance:.3f})" if out["rec_style_classes"] and chance == chance else
                             "with no Style classifier (no recorded set was scored: — no chance level)")
    return out
