"""The book's one escaping layer: every value that comes from a dataset, a config or a run (names, labels, word
texts, ids, paths) passes here where it becomes HTML, SVG, Markdown or figure text, so it shows as the text it is
and never runs as markup or script (in a reader's browser, or while the PDF is printed from the pages).

* :func:`html_text` / :func:`html_attr`: element content and a quoted attribute value of HTML and SVG (the tables
  of :mod:`~inkground_lib.report.table_view`, the pen-path players of :mod:`~inkground_lib.report.player`);
* :func:`md_escape` / :func:`md_code`: text shown literally in MyST Markdown (the pages' glued prose and tables),
  as prose or as inline code;
* :func:`inline_markdown` / :func:`plain_text`: a caption or note that *is* Markdown (written by the book), with
  any raw HTML in it escaped;
* :func:`figure_text`: text drawn in a matplotlib figure, shown as it is (no mathtext between ``$`` signs).

Python's :func:`html.escape` and markdown-it do the escaping; this module says which applies where.
"""

from __future__ import annotations

import functools
import html
import re

from markdown_it import MarkdownIt  # myst-nb's Markdown parser (requirements.txt pins myst-nb)

_MARKDOWN = MarkdownIt("commonmark", {"html": False})  # raw HTML in a caption is shown as text, not markup
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~$&!])")


def html_text(value) -> str:
    """``value`` as the content of an HTML or SVG element (&, <, > escaped; never inside an attribute: use
    :func:`html_attr` there).

    >>> html_text('<svg onload="alert(1)">')
    '&lt;svg onload="alert(1)"&gt;'
    """
    return html.escape(str(value), quote=False)


def html_attr(value) -> str:
    """``value`` as a double-quoted HTML or SVG attribute value, quotes included.

    >>> html_attr('x" onmouseover="alert(1)')
    '"x&quot; onmouseover=&quot;alert(1)"'
    """
    return '"' + html.escape(str(value), quote=True) + '"'


def md_escape(text) -> str:
    """Text shown literally in MyST Markdown: backslash, backtick, star, underscore, braces, brackets, angle
    brackets, hash, pipe, tilde, dollar, ampersand and exclamation mark escaped (no markup, role, link, math,
    entity or raw HTML can start in it).

    >>> md_escape("<img src=x onerror=alert(1)> {raw}`x` $a$")
    '\\\\<img src=x onerror=alert(1)\\\\> \\\\{raw\\\\}\\\\`x\\\\` \\\\$a\\\\$'
    """
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def md_code(text, table: bool = False) -> str:
    """``text`` as an inline code span of Markdown, shown exactly (no escaping shows in it): the span's backtick
    fence is longer than any run of backticks in the text (CommonMark's rule), so nothing in the text ends it
    early and becomes markup; a line break is shown as a space. In a table cell (``table``) a ``|`` is escaped,
    as GitHub-flavoured tables need even inside code.

    >>> md_code("runs/a"), md_code("x`<img src=x onerror=alert(1)>`")
    ('`runs/a`', '`` x`<img src=x onerror=alert(1)>` ``')
    """
    t = str(text).replace("\r", " ").replace("\n", " ")
    runs = {len(r) for r in re.findall(r"`+", t)}
    n = next(k for k in range(1, len(runs) + 2) if k not in runs)
    pad = " " if t.startswith("`") or t.endswith("`") or (t.startswith(" ") and t.endswith(" ") and t.strip()) else ""
    if table:
        t = t.replace("|", "\\|")
    return f"{'`' * n}{pad}{t}{pad}{'`' * n}"


def inline_markdown(text) -> str:
    """Inline Markdown (code spans, emphasis, links) as HTML; any HTML in ``text`` is escaped.

    >>> inline_markdown("the systems named in `systems` & <b>why</b>")
    'the systems named in <code>systems</code> &amp; &lt;b&gt;why&lt;/b&gt;'
    """
    return _MARKDOWN.renderInline(str(text))


def plain_text(text) -> str:
    """What inline Markdown reads as, without markup (for an ``aria-label``).

    >>> plain_text("Table 3.1: the systems named in `systems` (*all*)")
    'Table 3.1: the systems named in systems (all)'
    """
    return html.unescape(re.sub(r"<[^>]+>", "", inline_markdown(text)))


def figure_text(value) -> str:
    """``value`` as text drawn by matplotlib, shown as it is: each ``$`` escaped, so a word or name holding two
    of them is not typeset as math (nor fails to parse as math and stops the figure), and each character the
    figures' font has no glyph for written as its code point (an OCR engine given a scribble may read CJK
    characters: matplotlib would draw an empty box and warn).

    >>> figure_text("$x^2$ costs $5")
    '\\\\$x^2\\\\$ costs \\\\$5'
    >>> figure_text("OCR read '\u4e00'")
    "OCR read '<U+4E00>'"
    """
    text = str(value).replace("$", r"\$")
    drawable = _drawable_codepoints()
    if drawable is None or all(ord(ch) in drawable for ch in text):
        return text
    return "".join(ch if ord(ch) in drawable or ch in "\n\t" else f"<U+{ord(ch):04X}>" for ch in text)


@functools.lru_cache(maxsize=1)
def _drawable_codepoints() -> frozenset[int] | None:
    """Code points of the font matplotlib draws figure text with (its default font family), or None where
    matplotlib is not installed."""
    try:
        from matplotlib.font_manager import FontProperties, findfont
        from matplotlib.ft2font import FT2Font
    except ImportError:  # pragma: no cover - matplotlib is a pinned requirement
        return None
    return frozenset(FT2Font(findfont(FontProperties())).get_charmap())
