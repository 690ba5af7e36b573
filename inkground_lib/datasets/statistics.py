"""Section 01's dataset statistics: a page table and a word table of a dataset, and the paper's statistics
over them (pages, writers, words per page, strokes per page, points per stroke, word-box sizes)."""

from __future__ import annotations

import pandas as pd

from inkground_lib.core.dataset import Dataset


def page_table(ds: Dataset):
    """One row per page: page_id, writer, width, height (px), words, strokes, points (reference inks)."""
    rows = []
    for p in ds.pages:
        strokes = sum(len(w.ink) for w in p.words)
        points = sum(w.ink.n_points for w in p.words)
        rows.append({"page_id": p.id, "writer": p.writer, "width": p.width, "height": p.height,
                     "words": len(p.words), "strokes": strokes, "points": points})
    return pd.DataFrame(rows, columns=["page_id", "writer", "width", "height", "words", "strokes", "points"])


def word_table(ds: Dataset):
    """One row per word: ids, text, split, box width / height as fractions of the page's width / height,
    number of strokes and points of the reference ink."""
    rows = []
    for p in ds.pages:
        for w in p.words:
            x0, y0, x1, y1 = w.box
            rows.append({"page_id": p.id, "word_id": w.id, "text": w.text, "split": w.split,
                         "box_w": (x1 - x0) / p.width, "box_h": (y1 - y0) / p.height,
                         "strokes": len(w.ink), "points": w.ink.n_points})
    return pd.DataFrame(rows, columns=["page_id", "word_id", "text", "split", "box_w", "box_h", "strokes",
                                       "points"])


def statistics(ds: Dataset) -> dict:
    """The paper's dataset statistics (Sec. 'How it works') for ``ds``.

    Keys: pages, writers, words, words_per_page_mean/min/max, strokes_per_page_mean,
    points_per_stroke_mean (points as stored: resolution-dependent), box_width_median and box_height_median
    (median word-box size as a fraction of page width / height). Plain Python floats and ints.
    """
    pt, wt = page_table(ds), word_table(ds)
    n_strokes = int(pt["strokes"].sum())
    return {
        "pages": int(len(pt)),
        "writers": int(pt["writer"].nunique()),
        "words": int(pt["words"].sum()),
        "words_per_page_mean": float(pt["words"].mean()) if len(pt) else float("nan"),
        "words_per_page_min": int(pt["words"].min()) if len(pt) else 0,
        "words_per_page_max": int(pt["words"].max()) if len(pt) else 0,
        "strokes_per_page_mean": float(pt["strokes"].mean()) if len(pt) else float("nan"),
        "points_per_stroke_mean": float(pt["points"].sum() / n_strokes) if n_strokes else float("nan"),
        "box_width_median": float(wt["box_w"].median()) if len(wt) else float("nan"),
        "box_height_median": float(wt["box_h"].median()) if len(wt) else float("nan"),
    }
