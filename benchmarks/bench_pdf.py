"""The whole-book PDF as a book: print a built single-page book with publish/pdf.py and measure it.

    .venv/bin/python benchmarks/bench_pdf.py _build/singlehtml/whole-book.html [--before OLD.pdf] [--out X.pdf]

Prints the wall time of the printing (both prints of :func:`inkground_lib.publish.pdf.print_pdf`), the pages,
how many prints the contents' page numbers took, and checks the result the way a reader would: each bookmark's
title against the headings the page shows (a title that repeats itself, "SummarySummary", or glues two words is
counted), each page number of the contents against the page's text (it must hold that heading: found in the
text, not in the destinations the numbers came from), and the blank, nearly blank or caption-only pages
(:func:`~inkground_lib.publish.pdf.sparse_pages`). ``--before`` reads an earlier PDF of the same book for the
same bookmark and sparse-page counts. Results: benchmarks/results/pdf.txt.
"""

import argparse
import re
import tempfile
import time
import unicodedata
from pathlib import Path


def _text(page) -> str:
    return unicodedata.normalize("NFKC", " ".join((page.extract_text() or "").split()))


def repeated(title: str) -> bool:
    """Whether a bookmark title holds a run of text twice in a row ("SummarySummary", "Layer 1: Layer 1:")."""
    squashed = "".join(title.split())
    return bool(re.search(r"(.{6,})\1", squashed))


def bookmarks(path: Path) -> dict:
    import pypdf

    from inkground_lib.publish import pdf

    reader = pypdf.PdfReader(path)
    titles = [it.title for it in pdf.outline_items(reader)]
    return {"pages": len(reader.pages), "bookmarks": len(titles), "repeated": [t for t in titles if repeated(t)],
            "sparse": pdf.sparse_pages(path.read_bytes())}


def contents_check(path: Path, contents: list[tuple[str, int]]) -> list[str]:
    """Each contents entry whose page (after the contents) does not hold its title in its text (a title is mentioned
    on other pages too, so the page shown is what is checked)."""
    import pypdf

    reader = pypdf.PdfReader(path)
    texts = [_text(p) for p in reader.pages]
    last, number = unicodedata.normalize("NFKC", contents[-1][0]), contents[-1][1]
    end = next(i for i, t in enumerate(texts) if f"{last} {number}" in t)  # the contents' last page (from 0)
    wrong = []
    for title, shown in contents:
        title = unicodedata.normalize("NFKC", title)
        if shown <= end + 1 or title not in texts[shown - 1]:  # mentions elsewhere: only the page shown counts
            lands = [i + 1 for i, t in enumerate(texts) if i > end and title in t]
            wrong.append(f"{title!r}: shown {shown}, its text on {lands[:3]}")
    return wrong


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("page", type=Path)
    ap.add_argument("--before", type=Path)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    from inkground_lib.publish import pdf

    out = a.out or Path(tempfile.mkdtemp()) / "book.pdf"
    if a.before:
        b = bookmarks(a.before)
        print(f"before ({a.before}): {b['pages']} pages, {b['bookmarks']} bookmarks, {len(b['repeated'])} repeating "
              f"text ({b['repeated'][:3]}), sparse pages {b['sparse']}")
    t = time.perf_counter()
    info = pdf.print_pdf(a.page, out)
    wall = time.perf_counter() - t
    b = bookmarks(out)
    wrong = contents_check(out, info["contents"])
    print(f"after: {info['pages']} pages, printed whole {info['prints']} time(s), its {info.get('contents_reprinted', 0)} contents page(s) again, in {wall:.1f} s, {b['bookmarks']} bookmarks, "
          f"{len(b['repeated'])} repeating text ({b['repeated'][:3]}), sparse pages {info['sparse']}")
    print(f"contents: {len(info['contents'])} entries on pages {info['contents'][0][1]}-{info['contents'][-1][1]}, "
          f"{len(wrong)} whose number is not where the heading's text is{': ' + '; '.join(wrong[:5]) if wrong else ''}")


if __name__ == "__main__":
    main()
