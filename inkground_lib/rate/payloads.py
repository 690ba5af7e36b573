"""What the raters' app answers with besides its pages: a page as the app draws it (:func:`page_payload`) and the
statistics page's numbers (:func:`stats`), by section 02's own functions."""

from __future__ import annotations

import json
from functools import lru_cache

from inkground_lib.core.run_loaders import PseudoRun
from inkground_lib.pseudo.raters import RaterOutcome, rater_outcome, ratings_frame
from inkground_lib.rate.session import Session


@lru_cache(maxsize=32)
def _page_payload(run_id: int, page_id: str) -> str:
    from inkground_lib.report.player import pen_path_svg

    run = _RUNS[run_id]
    page = run.page(page_id)
    words = []
    for i, w in enumerate(page.words):
        ink = run.pseudo[w.id]
        words.append({
            "id": w.id, "text": w.text, "box": [round(float(v), 1) for v in w.box],
            "strokes": [[[round(float(x), 1), round(float(y), 1)] for x, y in s[:, :2]] for s in ink.strokes],
            "svg": pen_path_svg([(ink, "pseudo-label")], width_px=420, title=f"Pseudo-label of the word {w.text}",
                                controls=False, fig_id=f"w{i}"),
        })
    return json.dumps({"id": page.id, "width": page.width, "height": page.height, "photo": f"/photo/{page.id}",
                       "words": words})


_RUNS: dict[int, PseudoRun] = {}


def page_payload(run: PseudoRun, page_id: str) -> dict:
    """A page as the app draws it: photo address, size, and per word its text, box, pseudo-label strokes
    (page pixels) and an animated pen-path SVG (report.player) for the zoomed view."""
    _RUNS[id(run)] = run
    return json.loads(_page_payload(id(run), page_id))


def _figures(o: RaterOutcome) -> dict:
    ag = o.agreement
    return {"pages": list(o.pages), "n_pages": len(o.pages), "ratings": int(len(o.ratings)), "kept": len(o.kept),
            "rejected": len(o.rejected), "awaiting": len(o.awaiting), "rated": len(o.kept) + len(o.rejected),
            "agreement": _finite(ag["agreement"]), "alpha": _finite(ag["alpha"]),
            "pages_with_two_or_more": int(ag["pages"])}


def _finite(x):
    return None if x is None or x != x else float(x)


def stats(s: Session) -> dict:
    """The statistics page's numbers. ``used``: over exactly the pages section 02 uses (the run's pages that
    passed the OCR filter, from its pages.csv), with section 02's own function
    (:func:`inkground_lib.pseudo.raters.rater_outcome`) and this file's K: kept, rejected, awaiting ratings,
    agreement and Krippendorff's alpha on accept (10) vs reject. ``other``: the same for the pages this
    session offers that section 02 leaves out (``--pages all``: those that failed the OCR filter), apart;
    None when there are none. Also per-rater progress and the session's progress."""
    L, run = s.ledger, s.run
    rows = [{"page": p, "rater": r, "score": sc, "source": "real"} for p, got in L.ratings.items()
            for r, sc in got.items()]
    rt = ratings_frame(rows)
    used = [p for p in run.all_pages if run.ocr_pass.get(p)]
    rest = [p for p in L.pages if p not in set(used)]
    return {"run": str(run.run), "ratings_file": str(s.ratings_path), "k": L.k, "progress": L.progress(),
            "raters": L.per_rater(), "ocr_threshold": run.ocr_threshold,
            "used": _figures(rater_outcome(rt, used, L.k)),
            "other": _figures(rater_outcome(rt, rest, L.k)) if rest else None}
