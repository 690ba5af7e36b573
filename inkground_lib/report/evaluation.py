"""Section 03's figures and tables: galleries, the prompt and the systems compared."""

from __future__ import annotations

import math

import pandas as pd

from inkground_lib.core.defaults import GRID


def fig_galleries(ds, scores: pd.DataFrame, runs: dict, *, reference: str = "reference"):
    """Best, median and worst words by DTW, one row per system that ran. Each panel shows the page crop
    with the prediction drawn over it (colour runs along the pen path from dark to light, a dot marks each
    stroke's start) and the reference ink as a thin grey line; titles give the word, DTW and what OCR
    read from the rendered prediction."""
    import matplotlib.pyplot as plt

    from inkground_lib.core.render import crop_box
    from inkground_lib.report.overlay import plot_overlay

    names = [n for n in runs if (scores["system"] == n).any()]
    if not names:
        return None
    words = {w.id: (p, w) for p in ds.pages for w in p.words}
    index = {w.id: i for i, w in enumerate(ww for p in ds.pages for ww in p.words)}
    fig, axes = plt.subplots(len(names), 3, figsize=(12, 2.7 * len(names)), constrained_layout=True, squeeze=False)
    for axrow, name in zip(axes, names):
        run = runs[name]
        s = scores[scores["system"] == name].reset_index(drop=True)
        order = s["dtw"].sort_values(kind="stable").index.tolist()
        for ax, (tag, i) in zip(axrow, [("best", order[0]), ("median", order[len(order) // 2]), ("worst", order[-1])]):
            row = s.loc[i]
            page, word = words[row["word_id"]]
            ref = word.true_ink if reference == "true" else word.ink
            box = crop_box(word.box, (page.width, page.height), margin=0.35)
            img = page.load_image()[box[1]:box[3], box[0]:box[2]]
            ax.imshow(img, extent=(box[0] - 0.5, box[2] - 0.5, box[3] - 0.5, box[1] - 0.5))
            for stroke in ref:
                ax.plot(stroke[:, 0], stroke[:, 1], color="0.45", lw=0.8, alpha=0.8)
            pred = run.inks[index[word.id]]
            if pred is not None:
                plot_overlay(ax, pred, lw=1.6)
            ax.set_xlim(box[0] - 0.5, box[2] - 0.5)
            ax.set_ylim(box[3] - 0.5, box[1] - 0.5)
            ocr = row.get("ocr_text")
            ocr = "" if ocr is None or ocr is pd.NA or (isinstance(ocr, float) and math.isnan(ocr)) else str(ocr)
            ax.set_title(f"{run.label} - {tag}: '{word.text}'\nDTW {row['dtw']:.3f}, OCR read '{ocr}'", fontsize=8.5)
            ax.set_axis_off()
    return fig


def systems_table(systems, registry: dict | None = None) -> pd.DataFrame:
    """The systems of section 03, one row each from the registry (no system is built, no key is needed): name,
    label, kind, model, how its answers are sampled and why (the registry's ``sampling``) and the requests per
    minute the client paces it to (``rpm``); "-" where the registry gives none (local systems, self-hosted
    servers)."""
    from inkground_lib.evaluation.systems.registry import load_registry, system_kind

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
    from inkground_lib.evaluation.prompt import render_request_markdown, request_images
    from inkground_lib.evaluation.run import make_items

    item = make_items(ds, with_prompt=True, grid=grid)[0]
    req = item.request_for(variant)
    return render_request_markdown(req), request_images(req)


def fig_images(images, titles=None, width: float = 6.0):
    """Images side by side (e.g. the prompt's images)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(images), figsize=(width * len(images), width * 1.1), squeeze=False,
                             constrained_layout=True)
    for k, (ax, im) in enumerate(zip(axes[0], images)):
        ax.imshow(im)
        ax.set_axis_off()
        if titles:
            ax.set_title(titles[k], fontsize=10)
    return fig


def both_sides_table(res) -> pd.DataFrame:
    """Section 03's "both sides" table (:func:`inkground_lib.evaluation.both_sides.both_sides`): each
    derenderer against its own labels, the other's and the truth; DTW and Chamfer in reference word heights
    with 95% page-bootstrap intervals, at a precision that tells the bounds apart."""
    from inkground_lib.report.format import value_with_interval

    t = res.table
    out = pd.DataFrame({"derenderer": t["derenderer"], "scored against": t["scored against"],
                        "words": t["n_words"]})
    rows = t.to_dict("records")
    for m, label in (("dtw", "DTW"), ("chamfer", "Chamfer")):
        out[label] = [value_with_interval(r, m) for r in rows]
    return out.set_index(["derenderer", "scored against"])
