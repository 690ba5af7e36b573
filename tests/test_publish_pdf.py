"""The whole-book PDF as a book (issue 45): its bookmarks carry the headings' own text (Chromium's glued and repeated
them), its contents page lists the page each heading lands on, and a blank or caption-only page is found. Printed
by Chromium from a small single-page book shaped as Sphinx's singlehtml writes it."""
import re
import unicodedata

import pytest

import browser_checks
from inkground_lib.publish import pdf

LOREM = ("Handwriting traced word by word, its strokes compared with the writer's own pen path at every point. " * 9)

CHAPTERS = [
    ("1. Dataset statistics of the synthetic pages and the recorded words beside them",
     ["Ours beside the paper's numbers", "Distributions"]),
    ("2. Pseudo-labels", ["The funnel", "What the paper could not measure: distance to the truth"]),
    ("3. Per-model evaluation", ["Summary", "Layer 1: inkground_lib.core"]),
]
"""Chapter titles long enough to wrap on the page (Chromium glued wrapped lines), and sections with inline code
(Chromium repeated such text in its bookmarks)."""


def _heading(level: int, text: str, anchor: str) -> str:
    inner = re.sub(r"(inkground_lib\.\w+)", r'<code class="docutils literal"><span class="pre">\1</span></code>', text)
    return f'<h{level}>{inner}<a class="headerlink" href="#{anchor}" title="Link to this heading">#</a></h{level}>'


def _book(tmp_path, caption_alone: bool = False):
    body = ['<div class="bd-article"><section id="book"><h1>A small book</h1><p>Its opening.</p>']
    body += ['<section id="opening">', _heading(2, "What this book found", "opening"), f"<p>{LOREM}</p></section>"]
    body.append("</section>")
    for c, (title, sections) in enumerate(CHAPTERS):
        body.append(f'<span id="document-book/ch{c}"></span><section id="ch{c}">{_heading(2, title, f"ch{c}")}')
        for s, name in enumerate(sections):
            body.append(f'<section id="ch{c}-s{s}">{_heading(3, name, f"ch{c}-s{s}")}')
            body += [f"<p>{LOREM}</p>"] * (3 + 2 * s + c)
            body.append("</section>")
        body.append("</section>")
    if caption_alone:  # a caption its table left behind on the page before
        body.append('<p style="break-before: page">Table 9: a caption.</p>'
                    '<table style="break-before: page"><tr><td>0.123</td></tr></table>'
                    f"<p>{LOREM}</p>")
    page = tmp_path / "whole-book.html"
    page.write_text(f'<!doctype html><html><head><meta charset="utf-8"></head><body>{"".join(body)}</div>'
                    "</body></html>", "utf-8")
    return page


def _expected_titles():
    titles = ["A small book", pdf.CONTENTS_TITLE, "What this book found"]
    for title, sections in CHAPTERS:
        titles += [title, *sections]
    return titles


def _text(page) -> str:
    return unicodedata.normalize("NFKC", " ".join((page.extract_text() or "").split()))


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    browser_checks.require_chromium()
    tmp = tmp_path_factory.mktemp("pdf")
    out = tmp / "book.pdf"
    info = pdf.print_pdf(_book(tmp), out)
    return out, info


@pytest.mark.browser
def test_bookmarks_are_the_headings_text(printed):
    import pypdf

    out, info = printed
    assert info["outline"] is None
    reader = pypdf.PdfReader(out)
    titles = [it.title for it in pdf.outline_items(reader)]
    assert titles == _expected_titles()
    assert not any("#" in t or "  " in t for t in titles)


@pytest.mark.browser
def test_contents_lists_the_page_each_heading_lands_on(printed):
    """The contents page (page 1) shows, after each chapter's and section's title, a number; that number is the
    page whose text holds the heading (found in the text, not in the destinations the numbers came from)."""
    import pypdf

    out, info = printed
    reader = pypdf.PdfReader(out)
    assert len(reader.pages) >= 6 and info["pages"] == len(reader.pages)
    contents = _text(reader.pages[0])
    assert contents.startswith("A small book Contents")
    pages = [_text(p) for p in reader.pages]
    listed = ["What this book found"] + [t for title, sections in CHAPTERS for t in (title, *sections)]
    assert [t for t, _ in info["contents"]] == listed
    for title in listed:
        shown = re.search(re.escape(title) + r" (\d+)\b", contents)
        assert shown, title
        lands = [i + 1 for i, text in enumerate(pages) if i and title in text]
        assert lands and int(shown.group(1)) == lands[0], (title, shown.group(1), lands)
    assert len({n for _, n in info["contents"]}) >= 4  # the headings are on several pages, not all on one
    assert pdf.PAGE_PLACEHOLDER not in contents


@pytest.mark.browser
def test_a_caption_alone_or_a_blank_page_is_found(printed, tmp_path):
    out, info = printed
    assert info["sparse"] == [] == pdf.sparse_pages(out.read_bytes())
    bad = tmp_path / "bad.pdf"
    info = pdf.print_pdf(_book(tmp_path, caption_alone=True), bad)
    assert [text for _, text in info["sparse"]] == ["Table 9: a caption."]


def test_a_bookmark_that_is_not_its_heading_is_refused():
    assert pdf._within("summary", "summarysummary") and not pdf._within("summary", "overview")
    with pytest.raises(pdf.PdfError, match="bookmarks"):
        pdf._retitle(pdf._writer(_one_page_pdf()), ["A", "B"])


def _one_page_pdf() -> bytes:
    import io

    import pypdf

    w = pypdf.PdfWriter()
    w.add_blank_page(100, 100)
    w.add_outline_item(title="Only", page_number=0)
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def test_contents_pages_are_drawn_in_only_when_they_are_fewer_than_the_books(tmp_path):
    """Issue 42: the contents' pages printed again with their numbers replace the book's first pages only when
    they are laid out as the placeholders were; a print with as many pages as the book is not a contents print."""
    import io

    import pypdf

    def blank(n: int) -> bytes:
        w = pypdf.PdfWriter()
        for _ in range(n):
            w.add_blank_page(100, 100)
        w.add_outline_item(title="Only", page_number=0)
        buf = io.BytesIO()
        w.write(buf)
        return buf.getvalue()

    assert pdf.laid_out_alike(blank(3), blank(1))
    assert not pdf.laid_out_alike(blank(3), blank(3))
    data, note = pdf.finish_pdf(blank(3), ["Only"], blank(1))
    assert note is None and len(pypdf.PdfReader(io.BytesIO(data)).pages) == 3
    data, note = pdf.finish_pdf(blank(3), ["A", "B"])
    assert "bookmarks kept as Chromium titled them" in note and len(pypdf.PdfReader(io.BytesIO(data)).pages) == 3
