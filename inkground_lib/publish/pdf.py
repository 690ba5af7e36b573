"""One PDF of the whole book: Sphinx's ``singlehtml`` builder puts every page of the table of contents into one
HTML page (jupyter-book build --builder singlehtml, into _build/singlehtml), and Debian's Chromium prints it
(headless, through Playwright's ``Page.pdf``: https://playwright.dev/python/docs/api/class-page#page-pdf,
``outline`` for the PDF's bookmarks, ``tagged`` for its structure) once MathJax has typeset every formula. A
contents page listing the book's opening sections, every chapter and its sections, each with a link and the page
it lands on, opens the PDF (:func:`print_pdf`: Chromium has no page references, so the book is printed with
placeholders, the pages read back with pypdf, and the contents' pages printed again with the numbers); the
bookmarks carry the headings' own text (:func:`finish_pdf`); headers, footers and page numbers come from
Chromium's print template. Figures are the book's own PNG/SVG, tables are
text, and every number of the sections stays text (searchable, copyable). :func:`sparse_pages` names a blank,
nearly blank or caption-only page (make book warns of each).

    python -m inkground_lib.publish.pdf _build/html _build/html/inkground.pdf
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

from inkground_lib.core.files import atomic_write_bytes
from inkground_lib.core.layout import ROOT

PDF_NAME = "inkground.pdf"
"""The PDF's file name in the built HTML folder (linked from every page's download menu)."""

MATHJAX_TIMEOUT_MS = 120_000

PRINT_CSS = """
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-footer, .bd-footer-article, .header-article,
.prev-next-area, .bd-header-announcement, .headerlink, .toggle-button, .copybtn, #pst-back-to-top,
.bd-search, .search-button, .theme-switch-button, .article-header-buttons, .sidebar-toggle,
#jb-print-toc { display: none !important; }
.bd-main .bd-content .bd-article-container { max-width: 100% !important; padding: 0 !important; }
.bd-page-width { max-width: 100% !important; }
body { font-size: 10.5pt; }
span[id^="document-"] + section { break-before: page; }
#ink-pdf-contents { break-after: page; }
#ink-pdf-contents ol { list-style: none; padding-left: 0; font-size: 9pt; line-height: 1.3; }
#ink-pdf-contents li { margin: 0; }
#ink-pdf-contents li.ink-toc-1 { font-weight: 600; margin-top: 0.35em; }
#ink-pdf-contents li.ink-toc-2 { padding-left: 1.5em; font-weight: normal; }
#ink-pdf-contents a { display: flex; align-items: baseline; text-decoration: none; color: inherit; }
#ink-pdf-contents .ink-leader { flex: 1 1 auto; min-width: 1em; margin: 0 0.4em; border-bottom: 1px dotted #bbb; }
#ink-pdf-contents .ink-page { flex: none; min-width: 3ch; text-align: right; font-variant-numeric: tabular-nums; }
img, figure, table, svg, .cell_output { break-inside: avoid; max-width: 100% !important; }
img { max-height: 225mm; width: auto; height: auto; object-fit: contain; }
figure.ink-table-figure > figcaption { break-after: avoid; }
.ink-table-wrap { break-before: avoid; overflow: visible !important; }
figure.ink-table-figure table.ink-table { break-inside: auto; }
figure.ink-table-figure table.ink-table tr { break-inside: avoid; }
.cell_output:has(figure.ink-table-figure) { break-inside: auto; }
pre { white-space: pre-wrap !important; }
h1, h2, h3, h4, h5, h6 { break-after: avoid; break-inside: avoid; }
details.hide.above-input, details.hide.below-input > summary { display: none !important; }
"""

HEADINGS_JS = """
() => {
  // every heading the PDF shows, in document order: singlehtml marks where each document of the table of
  // contents starts (<span id="document-NAME"></span>); the root document comes first, without a mark
  const visible = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const title = (h) => {
    const c = h.cloneNode(true);
    c.querySelectorAll('.headerlink, .toggle-button, script, style').forEach((e) => e.remove());
    return c.textContent.replace(/\\s+/g, ' ').trim();
  };
  const out = [];
  let chapter = 0, n = 0;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT);
  for (let e = walker.currentNode; e; e = walker.nextNode()) {
    if (e.tagName === 'SPAN' && e.id.startsWith('document-')) { chapter += 1; continue; }
    if (!/^H[1-6]$/.test(e.tagName) || !visible(e)) continue;
    if (!e.id) e.id = 'ink-heading-' + (++n);
    out.push({id: e.id, title: title(e), level: +e.tagName[1], chapter: chapter});
  }
  return out;
}
"""
"""Lists every visible heading of the single-page book in document order - {id, title (its text without the
permalink sign, spaces collapsed), level (1-6), chapter (0: the root document, k: the k-th document of the table
of contents)} - and gives each heading without an id one (``ink-heading-N``), so the contents can link it."""

CONTENTS_JS = """
([html, first]) => {
  // the contents page: put in (or replaced) after the root document's first heading, before its text
  let box = document.getElementById('ink-pdf-contents');
  if (!box) {
    box = document.createElement('nav');
    box.id = 'ink-pdf-contents';
    const h = document.getElementById(first);
    h.parentNode.insertBefore(box, h.nextSibling);
  }
  box.innerHTML = html;
  return box.querySelectorAll('a').length;
}
"""
"""Puts the contents page's HTML (:func:`contents_html`) into the page after the heading whose id is given."""


class PdfError(RuntimeError):
    """The PDF cannot be made (no Chromium, no single-page build, MathJax did not finish, the contents' page
    numbers did not settle, the bookmarks do not match the headings)."""


def build_singlehtml(root: Path = ROOT) -> Path:
    """``jupyter-book build --builder singlehtml`` of ``root`` (warnings as errors, as the HTML book); returns
    the one page holding the whole book."""
    from inkground_lib.publish.notebook_runner import RunnerError, build_book

    try:
        build_book(root, builder="singlehtml")
    except RunnerError as e:
        raise PdfError(str(e)) from None
    import yaml

    out = Path(root) / "_build" / "singlehtml"
    toc_root = (yaml.safe_load((Path(root) / "_toc.yml").read_text("utf-8")) or {}).get("root", "index")
    found = [out / f"{toc_root}.html"]
    if not found[0].is_file():
        raise PdfError(f"the single-page build wrote no {found[0]}")
    # Sphinx writes the root document (book/intro) one folder down but its links as from the build's top
    # (_static/, _images/): the page is read from the top, where they resolve
    page = out / "whole-book.html"
    page.write_bytes(found[0].read_bytes())
    return page


CONTENTS_TITLE = "Contents"
"""The contents page's heading (and its bookmark)."""

CONTENTS_DEPTH = 2
"""Levels the contents page lists: each chapter (a document of the table of contents) and the headings one level
below its title."""

MAX_PRINTS = 4
"""Prints at most, until the page numbers the contents shows are where its headings land (two when the numbers
take the width the placeholders took, which :data:`PRINT_CSS` makes so)."""

PAGE_PLACEHOLDER = "000"
"""What the contents shows before the first print has placed its headings: as wide as any page number up to 999
(tabular figures), so filling in the numbers moves nothing."""


def contents_entries(headings: list[dict]) -> list[dict]:
    """The contents page's entries from :data:`HEADINGS_JS`'s list, {id, title, depth (1 or 2)}: the sections of
    the root document (the book's opening, below its title: the first heading) at depth 1, then each chapter's
    title (its first heading) at depth 1 and the chapter's headings one level below it at depth 2
    (:data:`CONTENTS_DEPTH` levels).

    >>> hs = [{"id": "t", "title": "Book", "level": 1, "chapter": 0},
    ...       {"id": "o", "title": "Opening", "level": 2, "chapter": 0},
    ...       {"id": "o1", "title": "Detail", "level": 3, "chapter": 0},
    ...       {"id": "a", "title": "1. Data", "level": 2, "chapter": 1},
    ...       {"id": "a1", "title": "Ours", "level": 3, "chapter": 1},
    ...       {"id": "a11", "title": "Detail", "level": 4, "chapter": 1},
    ...       {"id": "b", "title": "2. Labels", "level": 2, "chapter": 2}]
    >>> [(e["title"], e["depth"]) for e in contents_entries(hs)]
    [('Opening', 1), ('1. Data', 1), ('Ours', 2), ('2. Labels', 1)]
    """
    out, top = [], {}
    for h in headings:
        chapter = h["chapter"]
        if chapter not in top:
            top[chapter] = h["level"]
            if chapter:
                out.append({"id": h["id"], "title": h["title"], "depth": 1})
            continue
        below = h["level"] - top[chapter]  # levels below the chapter's (the book's) title
        if (chapter and 1 <= below < CONTENTS_DEPTH) or (not chapter and below == 1):
            out.append({"id": h["id"], "title": h["title"], "depth": below + 1 if chapter else 1})
    return out


def contents_html(entries: list[dict], pages: dict[str, int] | None = None) -> str:
    """The contents page: a heading, then each entry as a link with its page number (``pages``: {id: page, from 1})
    right-aligned after a dotted leader; :data:`PAGE_PLACEHOLDER` where no number is known yet.

    >>> contents_html([{"id": "a", "title": "1. <Data>", "depth": 1}], {"a": 7}).count('<span class="ink-page">7<')
    1
    """
    import html

    rows = []
    for e in entries:
        page = (pages or {}).get(e["id"])
        number = str(page) if page is not None else PAGE_PLACEHOLDER
        rows.append(f'<li class="ink-toc-{e["depth"]}"><a href="#{html.escape(e["id"])}">'
                    f'<span class="ink-title">{html.escape(e["title"])}</span><span class="ink-leader"></span>'
                    f'<span class="ink-page">{number}</span></a></li>')
    return f'<h1 id="ink-pdf-contents-title">{CONTENTS_TITLE}</h1><ol>{"".join(rows)}</ol>'


def _reader(data: bytes):
    """pypdf's reader of the PDF ``data``. pypdf's logger is set to errors only (for the process): its note on
    Chromium's cross-reference table ("Object count ... exceeds defined trailer size", harmless: every object is
    read) would otherwise land in make book's output."""
    import io
    import logging

    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    return pypdf.PdfReader(io.BytesIO(data))


def destination_pages(data: bytes, ids) -> dict[str, int]:
    """The page (from 1) of each of ``ids`` in the PDF ``data``, read from its named destinations (Chromium writes
    one for each element a link of the page points to: observed with Debian's Chromium 156, no documented promise,
so a missing one stops the print with PdfError); ids without one are left out."""
    reader = _reader(data)
    named = reader.named_destinations
    out = {}
    for i in ids:
        dest = named.get("/" + i) or named.get(i)
        if dest is not None:
            out[i] = reader.get_destination_page_number(dest) + 1
    return out


def outline_items(reader) -> list:
    """The PDF's bookmarks (outline items) in reading order, nested ones after their parent."""
    flat = []

    def walk(items):
        for it in items:
            walk(it) if isinstance(it, list) else flat.append(it)
    walk(reader.outline)
    return flat


def _squashed(text: str) -> str:
    import unicodedata

    return "".join(unicodedata.normalize("NFKC", text).split()).casefold()


def _within(short: str, long: str) -> bool:
    """Whether ``short``'s characters occur in ``long`` in order (a subsequence).

    >>> _within("thecommand", "the: the command command"), _within("ab", "ba")
    (True, False)
    """
    rest = iter(long)
    return all(c in rest for c in short)


def _writer(data: bytes):
    """A pypdf writer holding the PDF ``data`` (cloned: its pages, outline, names and structure)."""
    import pypdf

    return pypdf.PdfWriter(clone_from=_reader(data))


def _written(writer) -> bytes:
    import io

    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _retitle(writer, titles: list[str]) -> None:
    """Replace the titles of the bookmarks of the PDF in ``writer``, in reading order, by ``titles`` (the headings'
    own text). Chromium titles each bookmark from the heading as laid out, which glues wrapped lines
    ("reproducible companion" -> "reproduciblecompanion") and repeats some text ("SummarySummary"); its bookmarks'
    places and nesting are right. Raises PdfError, changing nothing, when the bookmarks are not the headings:
    another count, or a bookmark whose text, spaces removed, does not hold its heading's characters in order.
    Written here (pypdf reads and writes the outline, nothing retitles one)."""
    from pypdf.generic import NameObject, TextStringObject

    items = []
    node = writer._root_object.get("/Outlines")
    node = node.get_object().get("/First") if node is not None else None

    def walk(ref):
        while ref is not None:
            item = ref.get_object()
            items.append(item)
            walk(item.get("/First"))
            ref = item.get("/Next")
    walk(node)
    if len(items) != len(titles):
        raise PdfError(f"the PDF has {len(items)} bookmarks for {len(titles)} headings")
    for item, title in zip(items, titles):
        if not _within(_squashed(title), _squashed(str(item["/Title"]))):
            raise PdfError(f"bookmark {str(item['/Title'])!r} is not the heading {title!r}")
    for item, title in zip(items, titles):
        item[NameObject("/Title")] = TextStringObject(title)


def finish_pdf(data: bytes, titles: list[str], contents: bytes | None = None) -> tuple[bytes, str | None]:
    """The printed book ``data`` made whole in one pass of pypdf (each pass reads and writes the whole PDF: a few
    seconds): its first pages drawn as in ``contents`` when given (:func:`_draw_contents`), its bookmarks
    retitled (:func:`_retitle`). Returns the PDF and None, or why the bookmarks kept Chromium's titles (the PDF is
    whole all the same)."""
    writer = _writer(data)
    if contents is not None:
        _draw_contents(writer, contents)
    try:
        _retitle(writer, titles)
        note = None
    except PdfError as e:
        note = f"bookmarks kept as Chromium titled them ({e})"
    return _written(writer), note


CAPTION = re.compile(r"^(Table|Figure|Fig\.)\s*[\dA-Z][\w.]*[:.]", re.I)
"""How a table's or figure's caption begins ("Table 2.3:", "Fig. 9.")."""

SPARSE_CHARS = 300
"""A page whose body text (without the running header and footer) is shorter than this (characters), holds no
image and begins like a caption holds a caption alone (its table or figure went to the next page)."""

NEARLY_BLANK_CHARS = 80
"""A page with no image whose body text is shorter than this (characters) is blank or nearly so (a heading or the
last line of a list pushed over)."""


def page_body_text(page, title: str) -> str:
    """A PDF page's text without the running header (``title``) and footer ("N / M"), spaces collapsed."""
    lines = [ln.strip() for ln in (page.extract_text() or "").splitlines()]
    lines = [ln for ln in lines if ln and ln != title and not re.fullmatch(r"\d+ / \d+", ln)]
    return " ".join(" ".join(lines).split())


def _draws_an_image(page) -> bool:
    """Whether a PDF page's resources hold an image XObject (directly or in a form it draws): read from the page's
    dictionaries, without decoding any image (pypdf's ``page.images`` decodes each: 5.6 s for the book's 172
    pages, this 0.03 s)."""
    def walk(resources, depth=0) -> bool:
        xobjects = (resources or {}).get("/XObject") if depth < 4 else None
        for ref in (xobjects or {}).values():
            x = ref.get_object()
            if x.get("/Subtype") == "/Image":
                return True
            if x.get("/Subtype") == "/Form" and walk(x.get("/Resources"), depth + 1):
                return True
        return False
    return walk(page.get("/Resources"))


def sparse_pages(data: bytes, title: str = "inkground") -> list[tuple[int, str]]:
    """The pages (from 1, with their text) of the PDF ``data`` that hold no image and either a body text
    (:func:`page_body_text`) of fewer than NEARLY_BLANK_CHARS characters (blank or nearly so) or a caption alone
    (:data:`CAPTION`, fewer than SPARSE_CHARS characters)."""
    out = []
    for i, page in enumerate(_reader(data).pages):
        if _draws_an_image(page):  # before the text: reading a page's text is what takes the time
            continue
        text = page_body_text(page, title)
        if len(text) < NEARLY_BLANK_CHARS or (len(text) < SPARSE_CHARS and CAPTION.match(text)):
            out.append((i + 1, text))
    return out


def _numberless(text: str) -> str:
    """A page's text with every run of digits as one "#": the contents page with placeholders and with its page
    numbers read alike when they are laid out alike.

    >>> _numberless("2. Labels  000") == _numberless("2. Labels 17"), _numberless("Labels 17") == _numberless("Data 17")
    (True, False)
    """
    return re.sub(r"[0-9]+", "#", " ".join(text.split()))


def laid_out_alike(data: bytes, contents: bytes) -> bool:
    """Whether ``contents`` (the first pages of the book ``data`` printed again, its contents' page numbers filled
    in) is laid out as those pages of ``data`` (printed with placeholders): as many pages, fewer than the book's,
    each with the same text but for its digits (:func:`_numberless`). Then only the digits differ, and the pages
    after them are the same."""
    book, first = _reader(data), _reader(contents)
    n = len(first.pages)
    return 0 < n < len(book.pages) and all(
        _numberless(book.pages[i].extract_text() or "") == _numberless(first.pages[i].extract_text() or "")
        for i in range(n))


def _draw_contents(writer, contents: bytes) -> None:
    """Draw the first pages of the book in ``writer`` as in ``contents`` (:func:`laid_out_alike`): each page
    keeps its links, annotations and structure and takes its counterpart's drawing (content stream) and
    resources (fonts), so the bookmarks and named destinations stay the book's own."""
    from pypdf.generic import NameObject

    for i, drawn in enumerate(_reader(contents).pages):
        page = writer.pages[i]
        for key in ("/Contents", "/Resources"):
            if key in drawn:
                page[NameObject(key)] = drawn.raw_get(key).clone(writer)
            else:  # a page that draws nothing
                page.pop(key, None)


def _print(pg, title: str, pages: str = "") -> bytes:
    """The page ``pg`` printed to PDF (A4, the book's header and footer); ``pages``: Chromium's page ranges
    ("1-2"; all when empty)."""
    return pg.pdf(format="A4", print_background=True, outline=True, tagged=True, display_header_footer=True,
                  page_ranges=pages,
                  margin={"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
                  header_template=f'<div style="font-size:7pt;width:100%;text-align:center;color:#666">'
                                  f'{title}</div>',
                  footer_template='<div style="font-size:7pt;width:100%;text-align:center;color:#666">'
                                  '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')


def print_pdf(page: Path, out: Path, title: str = "inkground", when_written=None) -> dict:
    """Print the single-page book ``page`` to ``out`` with Chromium; returns {"chapters", "bytes", "pages",
    "prints" (of the whole book), "contents_reprinted" (the contents' pages printed again, 0 when the book was),
    "contents": [(title, page)], "sparse": :func:`sparse_pages`, "outline": None, or why the bookmarks kept
    Chromium's titles}.

    The contents page lists each chapter and its sections with the page each lands on. Chromium's print-to-PDF
    numbers pages in its footer but has no page references, so the book is printed first with a placeholder as
    wide as any page number (:data:`PAGE_PLACEHOLDER`), the pages of its headings read from the PDF's named
    destinations (:func:`destination_pages`, pypdf); then only the contents' pages are printed again with those
    numbers (2 s instead of a whole print's 9-15 s) and drawn into the book (:func:`laid_out_alike`,
    :func:`finish_pdf`). Where they are not laid out as the placeholders were, the whole book is printed again
    with the numbers, until the numbers shown are where the headings land (at most :data:`MAX_PRINTS` prints;
    PdfError otherwise). The bookmarks are Chromium's (``outline``), retitled with the headings' text
    (:func:`_retitle`; when they are not the headings, kept as they are and said in "outline"). Written here;
    ``when_written`` (a function of no arguments), when given, is called once the PDF is written, before its pages
    are checked (``make book`` starts the HTML build there: the check runs beside it)."""
    from inkground_lib.publish.chromium import in_browser

    def work(b):
        ctx = b.new_context(viewport={"width": 1100, "height": 1400})
        pg = ctx.new_page()
        pg.route("**/*", lambda r, req: r.continue_() if req.url.startswith(("file:", "data:")) else r.abort())
        pg.goto(Path(page).resolve().as_uri(), wait_until="load")
        pg.add_style_tag(content=PRINT_CSS)
        has_math = pg.evaluate("() => !!document.querySelector('.math')")
        if has_math:
            try:
                pg.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise && "
                                     "(MathJax.startup.promise.then(() => window.__inkMath = true), "
                                     "window.__inkMath === true)", timeout=MATHJAX_TIMEOUT_MS)
            except Exception as e:
                raise PdfError(f"MathJax did not typeset {page} within {MATHJAX_TIMEOUT_MS / 1000:.0f} s: {e}") \
                    from None
            left = pg.evaluate("() => document.querySelectorAll('.math:not(:has(mjx-container))').length")
            if left:
                raise PdfError(f"{left} formula(s) of {page} were not typeset by MathJax")
        pg.emulate_media(media="print")
        headings = pg.evaluate(HEADINGS_JS)
        entries = contents_entries(headings)
        chapters = sum(e["depth"] == 1 for e in entries)
        if not chapters:
            raise PdfError(f"{page}: no chapter found for the contents (no singlehtml document marks)")
        titles = [headings[0]["title"], CONTENTS_TITLE] + [h["title"] for h in headings[1:]]
        shown, again, contents = None, 0, None
        for prints in range(1, MAX_PRINTS + 1):
            pg.evaluate(CONTENTS_JS, [contents_html(entries, shown), headings[0]["id"]])
            data = _print(pg, title)
            landed = destination_pages(data, [e["id"] for e in entries])
            if len(landed) != len(entries):
                missing = [e["title"] for e in entries if e["id"] not in landed]
                raise PdfError(f"{len(missing)} heading(s) of the contents have no place in the PDF: {missing[:3]}")
            if landed == shown:
                break
            shown = landed
            # the contents ends its page (PRINT_CSS) and every entry lands after it: its pages are those before
            # the first entry's. Print only them again, with the numbers, into the book printed with placeholders
            front = min(shown.values()) - 1
            if front >= 1:
                pg.evaluate(CONTENTS_JS, [contents_html(entries, shown), headings[0]["id"]])
                contents = _print(pg, title, f"1-{front}")
                if laid_out_alike(data, contents):
                    again = front
                    break
                contents = None
        else:
            raise PdfError(f"the contents' page numbers did not settle in {MAX_PRINTS} prints")
        ctx.close()
        return chapters, data, contents, prints, again, [(e["title"], shown[e["id"]]) for e in entries], titles

    chapters, data, first_pages, prints, again, contents, titles = in_browser(work)
    data, outline = finish_pdf(data, titles, first_pages)  # outline: None, or why make book warns
    atomic_write_bytes(Path(out), data)
    if when_written is not None:
        when_written()
    return {"chapters": chapters, "bytes": len(data), "pages": len(_reader(data).pages), "prints": prints,
            "contents_reprinted": again,
            "contents": contents, "sparse": sparse_pages(data, title), "outline": outline}


def book_sources_hash(root: Path = ROOT) -> str:
    """sha256 of everything the PDF is made from: the book's pages and executed sections (book/), its table
    of contents and configuration, and this module and the book's Sphinx extension (how it is printed)."""
    root = Path(root)
    files = [p for p in sorted((root / "book").rglob("*")) if p.is_file() and not p.name.startswith(".")]
    files += [root / "_toc.yml", root / "_config.yml", Path(__file__),
              Path(__file__).with_name("sphinx_offline.py")]
    h = hashlib.sha256()
    for p in files:
        h.update(str(p.relative_to(root) if p.is_relative_to(root) else p.name).encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def make_pdf(out: Path | None = None, root: Path = ROOT, when_written=None) -> Path:
    """The whole book as one PDF at ``out`` (default _build/html/inkground.pdf). Nothing is built when the PDF
    there was made from the same sources (:func:`book_sources_hash`, kept in ``<out>.sha256``): a rerun of
    ``make book`` with nothing changed costs no single-page build and no printing. ``when_written``: see
    :func:`print_pdf` (called only when the PDF is printed now)."""
    out = Path(out) if out else Path(root) / "_build" / "html" / PDF_NAME
    from inkground_lib.publish.chromium import chromium_path

    chromium_path()  # NoChromium before a build that would be for nothing
    stamp = Path(root) / "_build" / f"{out.name}.sources.sha256"
    source = book_sources_hash(root)
    if out.is_file() and stamp.is_file() and stamp.read_text().strip() == source:
        print(f"[inkground] PDF: {out} unchanged (the book's sources are the same)", flush=True)
        return out
    page = build_singlehtml(root)
    info = print_pdf(page, out, when_written=when_written)
    stamp.write_text(source + "\n")
    how = (f"printed once and its {info['contents_reprinted']} contents page(s) again with their page numbers"
           if info["contents_reprinted"] else f"printed {info['prints']} times for the contents' page numbers")
    print(f"[inkground] PDF: {out} ({info['pages']} pages, {info['chapters']} chapters, {info['bytes'] / 1e6:.1f} "
          f"MB, {how}, sha256 "
          f"{hashlib.sha256(out.read_bytes()).hexdigest()[:12]})", flush=True)
    if info["outline"]:
        print(f"[inkground] PDF: warning: {info['outline']}", flush=True)
    for number, text in info["sparse"]:
        print(f"[inkground] PDF: warning: page {number} is blank or holds only a caption: {text[:80]!r}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[1]) if len(argv) > 1 else None
    try:
        make_pdf(out)
    except PdfError as e:
        print(f"pdf: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
