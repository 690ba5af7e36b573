"""One PDF of the whole book: Sphinx's ``singlehtml`` builder puts every page of the table of contents into one
HTML page (jupyter-book build --builder singlehtml, into _build/singlehtml), and Debian's Chromium prints it
(headless, through Playwright's ``Page.pdf``: https://playwright.dev/python/docs/api/class-page#page-pdf,
``outline`` for the PDF's bookmarks, ``tagged`` for its structure) once MathJax has typeset every formula. A
contents page listing every chapter and its sections, with links, opens the PDF; headers, footers and page
numbers come from Chromium's print template. Figures are the book's own PNG/SVG, tables are text, and every
number of the sections stays text (searchable, copyable).

    python -m inkground_lib.publish.pdf _build/html _build/html/inkground.pdf
"""

from __future__ import annotations

import hashlib
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
.bd-search, .search-button, .theme-switch-button, .article-header-buttons, .sidebar-toggle { display: none !important; }
.bd-main .bd-content .bd-article-container { max-width: 100% !important; padding: 0 !important; }
.bd-page-width { max-width: 100% !important; }
body { font-size: 10.5pt; }
span[id^="document-"] + section { break-before: page; }
#ink-pdf-contents { break-after: page; }
#ink-pdf-contents ol { list-style: none; padding-left: 1.2em; }
#ink-pdf-contents > ol { padding-left: 0; }
#ink-pdf-contents a { text-decoration: none; color: inherit; }
img, figure, table, svg, .cell_output { break-inside: avoid; max-width: 100% !important; }
figure.ink-table-figure > figcaption { break-after: avoid; }
.ink-table-wrap { break-before: avoid; overflow: visible !important; }
figure.ink-table-figure table.ink-table { break-inside: auto; }
figure.ink-table-figure table.ink-table tr { break-inside: avoid; }
.cell_output:has(figure.ink-table-figure) { break-inside: auto; }
pre { white-space: pre-wrap !important; }
details.hide.above-input, details.hide.below-input > summary { display: none !important; }
"""

CONTENTS_JS = """
() => {
  // singlehtml marks where each document of the table of contents starts: <span id="document-NAME"></span>
  // followed by its top section; the root document comes first, without a mark
  const article = document.querySelector('.bd-article') || document.body;
  const title = (h) => h.textContent.replace(/#\\s*$/, '').trim();
  const box = document.createElement('nav');
  box.id = 'ink-pdf-contents';
  box.innerHTML = '<h1>Contents</h1>';
  const top = document.createElement('ol');
  box.appendChild(top);
  let n = 0;
  for (const mark of article.querySelectorAll('span[id^="document-"]')) {
    const sec = mark.nextElementSibling;
    if (!sec || sec.tagName !== 'SECTION') continue;
    const h = sec.querySelector(':scope > h1, :scope > h2, :scope > h3');
    if (!h) continue;
    const li = document.createElement('li');
    li.innerHTML = '<a></a>';
    li.firstChild.href = '#' + (sec.id || mark.id);
    li.firstChild.textContent = title(h);
    const sub = document.createElement('ol');
    for (const s of sec.querySelectorAll(':scope > section')) {
      const hs = s.querySelector(':scope > h2, :scope > h3, :scope > h4');
      if (!hs || !s.id) continue;
      const l2 = document.createElement('li');
      l2.innerHTML = '<a></a>';
      l2.firstChild.href = '#' + s.id;
      l2.firstChild.textContent = title(hs);
      sub.appendChild(l2);
    }
    if (sub.children.length) li.appendChild(sub);
    top.appendChild(li);
    n++;
  }
  const first = article.querySelector('section');
  article.insertBefore(box, first ? first.nextSibling : article.firstChild);
  return n;
}
"""


class PdfError(RuntimeError):
    """The PDF cannot be made (no Chromium, no single-page build, MathJax did not finish)."""


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


def print_pdf(page: Path, out: Path, title: str = "inkground") -> dict:
    """Print the single-page book ``page`` to ``out`` with Chromium; returns {"chapters", "bytes"}."""
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
        chapters = pg.evaluate(CONTENTS_JS)
        if not chapters:
            raise PdfError(f"{page}: no chapter found for the contents (no singlehtml document marks)")
        pg.emulate_media(media="print")
        data = pg.pdf(format="A4", print_background=True, outline=True, tagged=True, display_header_footer=True,
                      margin={"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
                      header_template=f'<div style="font-size:7pt;width:100%;text-align:center;color:#666">'
                                      f'{title}</div>',
                      footer_template='<div style="font-size:7pt;width:100%;text-align:center;color:#666">'
                                      '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')
        ctx.close()
        return chapters, data

    chapters, data = in_browser(work)
    atomic_write_bytes(Path(out), data)
    return {"chapters": chapters, "bytes": len(data)}


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


def make_pdf(out: Path | None = None, root: Path = ROOT) -> Path:
    """The whole book as one PDF at ``out`` (default _build/html/inkground.pdf). Nothing is built when the PDF
    there was made from the same sources (:func:`book_sources_hash`, kept in ``<out>.sha256``): a rerun of
    ``make book`` with nothing changed costs no single-page build and no printing."""
    out = Path(out) if out else Path(root) / "_build" / "html" / PDF_NAME
    from inkground_lib.publish.chromium import chromium_path

    chromium_path()  # NoChromium before a build that would be for nothing
    stamp = Path(root) / "_build" / f"{out.name}.sources.sha256"
    source = book_sources_hash(root)
    if out.is_file() and stamp.is_file() and stamp.read_text().strip() == source:
        print(f"[inkground] PDF: {out} unchanged (the book's sources are the same)", flush=True)
        return out
    page = build_singlehtml(root)
    info = print_pdf(page, out)
    stamp.write_text(source + "\n")
    print(f"[inkground] PDF: {out} ({info['chapters']} chapters, {info['bytes'] / 1e6:.1f} MB, sha256 "
          f"{hashlib.sha256(out.read_bytes()).hexdigest()[:12]})", flush=True)
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
