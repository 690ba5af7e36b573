"""Helpers for the book: the paper's reported numbers, tables of ours beside the paper's, glue, figures,
and the generated reproducibility page.

The paper's numbers live in one file, ``data/paper/reported.csv`` (columns id, section, dataset, system,
metric, value, kind, sentence): every number of the paper summary with the sentence it comes from. A
number in a table is either measured here (column "ours") or the paper's (column "paper (reported)").
"""

from __future__ import annotations

import json
import math
import platform
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from .files import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
PAPER_CSV = ROOT / "data" / "paper" / "reported.csv"


def paper_numbers(path: str | Path | None = None) -> pd.DataFrame:
    """The paper's reported numbers (one row per number), indexed by id."""
    df = pd.read_csv(path or PAPER_CSV, dtype={"section": str})
    if not df["id"].is_unique:
        raise ValueError(f"{path or PAPER_CSV}: duplicate ids {df['id'][df['id'].duplicated()].tolist()}")
    return df.set_index("id")


def paper_value(key: str, path: str | Path | None = None) -> float:
    return float(paper_numbers(path).loc[key, "value"])


def beside_paper(ours: dict, rows: list[tuple[str, str, str | None]], *, paper: pd.DataFrame | None = None,
                 decimals: int = 3) -> pd.DataFrame:
    """A table with our value beside the paper's.

    ``rows``: (label, key in ``ours``, id in reported.csv or None where the paper gives no number).
    Columns: quantity, ours (measured here), paper (reported), ratio ours / paper.
    """
    paper = paper_numbers() if paper is None else paper
    out = []
    for label, key, pid in rows:
        v = ours.get(key, float("nan"))
        p = float(paper.loc[pid, "value"]) if pid is not None else float("nan")
        out.append({"quantity": label, "ours (measured)": _num(v, decimals), "paper (reported)": _num(p, decimals),
                    "ours / paper": round(float(v) / p, 2) if p and not math.isnan(p) else float("nan")})
    return pd.DataFrame(out, dtype=object).set_index("quantity")


def _num(v, decimals: int):
    """Integral values as int (a count reads 537, not 537.000), others rounded to ``decimals``."""
    v = float(v)
    if math.isnan(v):
        return v
    return int(v) if v.is_integer() else round(v, decimals)


def plain(v):
    """numpy scalars to Python numbers (numpy 2 would glue ``np.float64(2.0)`` as text)."""
    if isinstance(v, np.generic):
        return v.item()
    return v


def glue_all(values: dict, prefix: str = "") -> None:
    """Glue every value (plain Python numbers / strings) for ``{glue:text}`` in the notebook's prose."""
    from myst_nb import glue

    for k, v in values.items():
        glue(prefix + k, plain(v), display=False)


# ------------------------------------------------------------------------------------------- figures

def fig_dataset_histograms(pages: pd.DataFrame, words: pd.DataFrame, paper: pd.DataFrame | None = None):
    """Histograms of words per page, strokes per page, points per stroke and word-box size; the paper's
    value (where it reports one) as a dashed line labelled 'paper'."""
    import matplotlib.pyplot as plt

    paper = paper_numbers() if paper is None else paper
    fig, axes = plt.subplots(1, 4, figsize=(13, 2.8), constrained_layout=True)
    pps = (pages["points"] / pages["strokes"].clip(lower=1))
    specs = [(pages["words"], "words per page", "words_per_page_mean"),
             (pages["strokes"], "strokes per page", "strokes_per_page_mean"),
             (pps, "points per stroke (page mean)", "points_per_stroke_mean"),
             (words["box_w"], "word-box width / page width", "box_width_median")]
    for ax, (vals, label, pid) in zip(axes, specs):
        ax.hist(vals, bins=20, color="#4c72b0", alpha=0.85)
        ax.set_xlabel(label)
        ax.axvline(float(paper.loc[pid, "value"]), color="#c44e52", ls="--", lw=1.5, label="paper")
        ax.legend(frameon=False, fontsize=8)
    axes[0].set_ylabel("count")
    return fig


def fig_pages_with_boxes(ds, page_ids: list[str], max_cols: int = 2):
    """Example page photos with their word boxes (page pixels) and word ids."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    n = len(page_ids)
    cols = min(max_cols, n)
    rows = int(math.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 7.5 * rows), squeeze=False, constrained_layout=True)
    for ax, pid in zip(axes.flat, page_ids):
        page = ds.page(pid)
        ax.imshow(page.load_image())
        for w in page.words:
            x0, y0, x1, y1 = w.box
            ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ec="#dd8452", lw=1))
        ax.set_title(f"page {pid}: {len(page.words)} words, writer {page.writer}", fontsize=10)
        ax.set_axis_off()
    for ax in list(axes.flat)[n:]:
        ax.set_axis_off()
    return fig


# ------------------------------------------------------------------------------- reproducibility page

KEY_PACKAGES = ["numpy", "scipy", "pandas", "matplotlib", "numba", "scikit-image", "opencv-python-headless",
                "rapidfuzz", "rapidocr", "onnxruntime", "torch", "transformers", "safetensors", "papermill",
                "jupyter-book", "myst-nb", "Hershey-Fonts", "openai", "anthropic"]


def package_versions(names=KEY_PACKAGES) -> dict:
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = "not installed"
    return out


def write_reproducibility_page(path: Path, executed: list[Path], datasets: dict[str, dict]) -> Path:
    """Generate the reproducibility page (markdown) from the executed notebooks' recorded parameters and
    fingerprints, the dataset hashes and the installed package versions."""
    lines = ["# Reproducibility", "",
             "This page is generated by `make book` from what was actually run: the parameters papermill "
             "recorded in each executed section, the content hashes of the datasets they read, and the "
             "installed package versions. Rerun any section with new parameters:", "",
             "```bash", "inkground run 01 -p dataset data/datasets/synth", "make book   # rebuilds the pages", "```",
             "", "## Sections", "",
             "| section | parameters | fingerprint |", "|---|---|---|"]
    for nb_path in executed:
        nb = json.loads(Path(nb_path).read_text("utf-8"))
        meta = nb.get("metadata", {})
        ig = meta.get("inkground", {})
        pm = meta.get("papermill", {}).get("parameters", {})
        params = ", ".join(f"`{k}={v!r}`" for k, v in pm.items()) or "defaults"
        lines.append(f"| {ig.get('section', Path(nb_path).stem)} | {params} | `{ig.get('fingerprint', '')[:12]}` |")
    lines += ["", "## Datasets", "", "| dataset | kind | pages | words | sha256 |", "|---|---|---|---|---|"]
    for name, d in datasets.items():
        lines.append(f"| {name} | {d.get('kind', '')} | {d.get('pages', '')} | {d.get('words', '')} | "
                     f"`{d.get('hash', '')[:16]}` |")
    lines += ["", "## Software", "", f"Python {platform.python_version()} on {platform.machine()} "
              f"({platform.system()}).", "", "| package | version |", "|---|---|"]
    for k, v in package_versions().items():
        lines.append(f"| {k} | {v} |")
    lines.append("")
    return atomic_write_text(path, "\n".join(lines))


def describe_dataset(ds) -> str:
    """One sentence saying what produced a dataset (for the book's provenance lines)."""
    m = ds.meta or {}
    m = {**m, **m.get("params", {})}
    if ds.kind == "synth":
        return (f"synthetic photographed pages generated offline by inkground synth (seed {m.get('seed')}, "
                f"{len(ds.pages)} pages; Hershey script font, one synthetic writer per page; true trajectories known)")
    if ds.kind == "recorded":
        return (f"pages composed from real recorded cursive words ({m.get('source', 'recorded ink')}), one writer "
                f"per page, photographed by the same pipeline; recorded trajectories are the ground truth")
    if ds.kind == "benchmark":
        return f"benchmark set built by the pseudo-label pipeline from {m.get('candidates', 'a candidate set')}"
    return f"the inkGround pages loaded from {ds.root}"


def paper_glue(ids: list[str], prefix: str = "paper_") -> None:
    """Glue the paper's reported values (by id in reported.csv) so prose cites them from the data file."""
    p = paper_numbers()
    glue_all({k: float(p.loc[k, "value"]) for k in ids}, prefix=prefix)


# ------------------------------------------------------------------------------------ section 03 tables

# The paper's systems by their names in reported.csv, with the reported.csv id prefix per dataset.
PAPER_ROWS = {
    "inkGround": [("Gemini-3.1-Pro", "gemini_ink"), ("Claude-Opus-4.8", "claude_ink"), ("Kimi-K3", "kimi_ink"),
                  ("Qwen3-VL-32B", "qwen_ink")],
    "IAM-OnDB": [("InkSight", "inksight_iam"), ("Gemini-3.1-Pro", "gemini_iam"), ("Qwen3-VL-32B", "qwen_iam"),
                 ("Molmo-7B-D", "molmo_iam")],
}
_METRICS = [("DTW", "dtw"), ("Chamfer", "chamfer"), ("AR", "ar"), ("CR", "cr"), ("Style", "style")]


def _ci(row, key: str, decimals: int = 3) -> str:
    v = row.get(key, float("nan"))
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    lo, hi = row.get(f"{key}_lo", float("nan")), row.get(f"{key}_hi", float("nan"))
    if lo is None or (isinstance(lo, float) and math.isnan(lo)):
        return f"{v:.{decimals}f}"
    return f"{v:.{decimals}f} [{lo:.2f}, {hi:.2f}]"


def results_table(summary: pd.DataFrame, paper_dataset: str | None, *, paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """The paper-style results table: one row per system that ran here (measured, with 95% page-bootstrap
    intervals in brackets), then the paper's reported rows for ``paper_dataset`` ("inkGround" or
    "IAM-OnDB"; None for none). Columns: source, DTW, Chamfer, AR, CR, Style, valid rate."""
    paper = paper_numbers() if paper is None else paper
    rows = []
    for _, r in summary.iterrows():
        rec = {"system": r.get("label", r["system"]), "source": "ours (measured)"}
        for col, key in _METRICS:
            rec[col] = _ci(r, key)
        rec["valid rate"] = f"{r['valid_rate']:.2f}"
        rows.append(rec)
    for label, prefix in PAPER_ROWS.get(paper_dataset, []):
        rec = {"system": label, "source": "paper (reported)"}
        for col, key in _METRICS:
            pid = f"{prefix}_{key}"
            rec[col] = f"{float(paper.loc[pid, 'value']):.3f}" if pid in paper.index else "–"
        rec["valid rate"] = "–"
        rows.append(rec)
    df = pd.DataFrame(rows).fillna("")
    return df.set_index("system")


def unavailable_table(unavailable: dict) -> pd.DataFrame:
    """The systems that could not run here, each with what it needs (never a secret value)."""
    rows = [{"system": n, "why it did not run here": short_reason(r)} for n, r in unavailable.items()]
    return pd.DataFrame(rows, columns=["system", "why it did not run here"]).set_index("system")


def short_reason(reason: str) -> str:
    """The first clause of a 'cannot run here' reason, up to the first ';' or sentence end (no secrets are
    ever in these)."""
    reason = str(reason)
    cuts = [i for i in (reason.find(";"), reason.find(". ")) if i > 0]
    return reason[:min(cuts)] if cuts else reason


def fig_galleries(ds, scores: pd.DataFrame, runs: dict, *, reference: str = "reference"):
    """Best, median and worst words by DTW, one row per system that ran. Each panel shows the page crop
    with the prediction drawn over it (colour runs along the pen path from dark to light, a dot marks each
    stroke's start) and the reference ink as a thin grey line; titles give the word, DTW and what OCR
    read from the rendered prediction."""
    import matplotlib.pyplot as plt

    from .render import crop_box, plot_overlay

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


def prompt_example(ds, grid: int = 50, variant: str = "two-image"):
    """The exact request sent to every VLM for the first word of ``ds`` (the book shows its text and
    images): returns (markdown of the text parts, list of decoded images)."""
    from .prompt import render_request_markdown, request_images
    from .evaluate import make_items

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
