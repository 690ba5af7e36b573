"""A Sphinx extension that keeps the built book free of external references and light.

* It drops the Thebe scripts that sphinx-thebe writes into every page (MathJax is served locally by
  sphinx-mathjax-offline). The design page of the book has the details.
* MathJax only where a page has math of its own: Sphinx 7.4's ``MathDomain.has_equations(page)`` also counts
  the pages in the page's toctree, so the front page (whose toctree holds every chapter) loaded MathJax
  (1.2 MB of scripts and fonts) without a formula; the page's own record decides here.
* No ``fontawesome.js`` (1.49 MB, on every page): pydata-sphinx-theme 0.15 loads it from its template
  (``static/webpack-macros.html``, "so that users can add custom icons"), while its stylesheet already draws every
  ``fa-*`` icon from the Font Awesome web fonts it ships. The tag is taken out of each written page and the script
  out of the built folder.
* The launch buttons (Binder, Colab; on once CITATION.cff gives the repository's address,
  :mod:`inkground_lib.publish.citation`) open a section's source notebook under ``notebooks/``, which is in the
  repository, instead of the executed copy under ``book/sections/``, which is built and never committed.
"""

import re
from pathlib import Path

FONTAWESOME_TAG = re.compile(r'[ \t]*<script\b[^>]*\bsrc="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*>'
                             r'\s*</script>[ \t]*\n?')
FONTAWESOME_FILES = ("fontawesome.js", "fontawesome.js.map", "fontawesome.js.LICENSE.txt")


def _is_thebe(js) -> bool:
    name = str(getattr(js, "filename", js) or "")
    body = str(getattr(js, "attributes", {}).get("body", "")) if hasattr(js, "attributes") else ""
    return "thebe" in name.lower() or "THEBE_JS_URL" in body


def _is_mathjax(js) -> bool:
    name = str(getattr(js, "filename", js) or "")
    body = str(getattr(js, "attributes", {}).get("body", "")) if hasattr(js, "attributes") else ""
    return "mathjax" in name.lower() or body.lstrip().startswith(("window.MathJax", "MathJax.Hub.Config"))


def page_has_math(app, pagename: str) -> bool:
    """Whether the page itself holds math (not the pages of its toctree)."""
    try:
        return bool(app.env.get_domain("math").data["has_equations"].get(pagename, False))
    except Exception:  # no math domain: keep what Sphinx decided
        return True


def drop_external_scripts(app, pagename, templatename, context, doctree):
    files = context.get("script_files")
    if files:
        # the single-page build (the PDF's source) holds every page: there the toctree's math is the page's
        keep_math = app.builder.name != "html" or page_has_math(app, pagename)
        context["script_files"] = [js for js in files if not _is_thebe(js) and (keep_math or not _is_mathjax(js))]


def source_notebook_launch(app, pagename, templatename, context, doctree):
    """Launch buttons of an executed section (book/sections/NN_name) open notebooks/NN_name.ipynb (their
    addresses are absolute, on the launch service; the page's own download links are relative and kept)."""
    if not re.fullmatch(r"book/sections/\d\d_\w+", pagename):
        return

    def fix(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "url" and isinstance(v, str) and v.startswith(("https://", "http://")):
                    node[k] = v.replace("book/sections/", "notebooks/").replace("book%2Fsections%2F", "notebooks%2F")
                else:
                    fix(v)
        elif isinstance(node, list):
            for v in node:
                fix(v)

    fix(context.get("header_buttons"))


BOOK_DOWNLOADS = (
    ("inkground.pdf", "book (.pdf)", "fas fa-book", "The whole book as one PDF", "download-book-pdf-button"),
    ("inkground-results.zip", "results (.zip)", "fas fa-file-zipper",
     "The run files behind the book's numbers (CSV/JSON, with their sha256 and parameters)",
     "download-results-button"),
    ("inkground.bib", "cite (.bib)", "fas fa-quote-right", "BibTeX for this companion and the paper",
     "download-bibtex-button"),
)
"""Files of the whole book, written into the HTML folder by ``make book`` (:mod:`inkground_lib.publish.pdf`,
:mod:`inkground_lib.publish.results`) and linked from every page's download menu: (file, text, icon, tooltip,
label). Only those the build folder holds when the build starts are linked (no PDF without Chromium): the list
is a config value (``inkground_book_downloads``, rebuild "html"), so a file that appears or goes rewrites every
page, not only the pages that changed."""


def book_downloads(app, pagename, templatename, context, doctree):
    """The whole book's PDF and results archive in every page's download menu, beside the page's own files;
    the theme's print button is named for what it prints (this page)."""
    if app.builder.name != "html":
        return
    for group in context.get("header_buttons") or []:
        if isinstance(group, dict) and group.get("label") == "download-buttons":
            for b in group.get("buttons", []):
                if b.get("label") == "download-pdf-button":
                    b["text"], b["tooltip"] = "this page (.pdf)", "Print this page to PDF"
            group["buttons"] += [{"type": "link", "url": context["pathto"](f, 1), "text": text, "icon": icon,
                                  "tooltip": tip, "label": label} for f, text, icon, tip, label in BOOK_DOWNLOADS
                                 if f in app.config.inkground_book_downloads]


def drop_fontawesome(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        text = page.read_text("utf-8")
        new = FONTAWESOME_TAG.sub("", text)
        if new != text:
            page.write_text(new, "utf-8")
    for name in FONTAWESOME_FILES:
        (out / "_static" / "scripts" / name).unlink(missing_ok=True)


def setup(app):
    present = [f for f, *_ in BOOK_DOWNLOADS if (Path(app.outdir) / f).is_file()]
    app.add_config_value("inkground_book_downloads", present, "html")
    app.connect("html-page-context", drop_external_scripts, priority=900)
    app.connect("html-page-context", source_notebook_launch, priority=900)
    app.connect("html-page-context", book_downloads, priority=900)
    app.connect("build-finished", drop_fontawesome)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
