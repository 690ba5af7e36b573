"""How large the book's figures' text shows on a page, and the sizes every figure is made to so that it stays
legible: at least :data:`MIN_CSS_PX` CSS px at a 420 px phone window and at a 1400 px desktop window.

A figure is saved as a PNG at :data:`FIGURE_DPI` (the notebooks' inline backend, ``bbox_inches="tight"``), so
text of ``s`` points is ``s * FIGURE_DPI / 72`` image pixels; the page shows the image at its own width up to the
article's content width and scales it down beyond that. The content widths were measured in headless Chromium on
this book's theme (a built book's sections 01-04 and the tracer page, 2026-12-06, every figure's
``getBoundingClientRect().width``): :data:`PHONE_CONTENT_PX` at a 420 px window, :data:`DESKTOP_CONTENT_PX` at
1400 px. So the smallest text shows at ``s * FIGURE_DPI / 72 * min(1, content / image width)`` CSS px, and a
figure whose smallest text is ``s`` points is legible on a phone when its saved width is at most
:func:`max_width_in` ``(s)`` inches."""

from __future__ import annotations

import io

PHONE_CONTENT_PX = 372
"""The article's content width (CSS px) at a 420 px window: the widest a figure shows on a phone."""

DESKTOP_CONTENT_PX = 768
"""The article's content width (CSS px) at a 1400 px window."""

MIN_CSS_PX = 9.0
"""The smallest text a figure may show, in CSS px, at either window width (issue 45)."""

FIGURE_DPI = 100
"""The figures' resolution in the book (dots per inch: the notebooks' inline backend)."""

FIGURE_TEXT_PT = 10
"""The smallest text of the book's figures (tick labels, legends, titles, point labels), in points."""

FIGURE_WIDTH_IN = 5.4
"""The width (inches) of a full-width figure: at :data:`FIGURE_TEXT_PT` its text shows at >= :data:`MIN_CSS_PX`
on a phone (:func:`max_width_in`), with room for what ``bbox_inches="tight"`` adds around the axes."""


def max_width_in(text_pt: float = FIGURE_TEXT_PT) -> float:
    """The widest saved figure (inches at :data:`FIGURE_DPI`) whose ``text_pt``-point text still shows at
    :data:`MIN_CSS_PX` CSS px where a phone (:data:`PHONE_CONTENT_PX`) scales it to the content width.

    >>> round(max_width_in(10), 2), max_width_in(10) >= FIGURE_WIDTH_IN
    (5.74, True)
    """
    return PHONE_CONTENT_PX * (text_pt / 72) / MIN_CSS_PX


def shown_css_px(text_pt: float, image_px: float, content_px: float) -> float:
    """CSS px of ``text_pt``-point text in a figure saved ``image_px`` pixels wide (at :data:`FIGURE_DPI`)
    shown in a content column ``content_px`` CSS px wide (at its own width, or scaled down to the column).

    >>> round(shown_css_px(10, 900, PHONE_CONTENT_PX), 2), round(shown_css_px(10, 500, DESKTOP_CONTENT_PX), 2)
    (5.74, 13.89)
    """
    return text_pt * FIGURE_DPI / 72 * min(1.0, content_px / image_px)


def visible_texts(fig) -> list:
    """Every visible, non-empty text artist of ``fig`` (titles, labels, tick labels, legends, annotations)."""
    return [t for t in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontsize"))
            if t.get_visible() and str(t.get_text()).strip() and (t.axes is None or t.axes.get_visible())]


def saved_width_px(fig) -> int:
    """The width (px) of ``fig`` saved as the book saves it (PNG, :data:`FIGURE_DPI`, ``bbox_inches="tight"``)."""
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
    return Image.open(io.BytesIO(buf.getvalue())).size[0]


def text_css_px(fig) -> dict:
    """The smallest text of ``fig`` as the book shows it: {"pt": its size in points, "width_px": the saved
    width, "phone": CSS px at a 420 px window, "desktop": at 1400 px}."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if fig.canvas is None or not hasattr(fig.canvas, "print_png"):
        FigureCanvasAgg(fig)
    width = saved_width_px(fig)
    pt = min(t.get_fontsize() for t in visible_texts(fig))
    return {"pt": pt, "width_px": width, "phone": shown_css_px(pt, width, PHONE_CONTENT_PX),
            "desktop": shown_css_px(pt, width, DESKTOP_CONTENT_PX)}


def overlapping_texts(fig) -> list[tuple[str, str]]:
    """Pairs of visible titles, axis labels, legends and figure texts of ``fig`` whose drawn boxes overlap
    (tick labels of one axis are left to matplotlib's locators; point labels are placed by adjustText)."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    items = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
            if t.get_visible() and t.get_text().strip():
                items.append((t.get_text(), t.get_window_extent(r)))
    for leg in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]:
        items.append(("legend", leg.get_window_extent(r)))
    for t in fig.texts:
        if t.get_visible() and t.get_text().strip():
            items.append((t.get_text(), t.get_window_extent(r)))
    out = []
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            a, b = items[i][1], items[j][1]
            if a.width and b.width and a.overlaps(b):
                out.append((items[i][0], items[j][0]))
    return out


def wrap_to(text: str, width_in: float, text_pt: float = FIGURE_TEXT_PT) -> str:
    """``text`` broken into lines (at spaces, existing line breaks kept) that fit ``width_in`` inches at
    ``text_pt`` points: an average character is taken as 0.6 of the type size wide (DejaVu Sans, matplotlib's
    default, averages about 0.55 on lower-case text).

    >>> wrap_to("tracer-recognize (learned here; given the OCR reading of the word's crop)", 2.8)
    "tracer-recognize (learned here;\\ngiven the OCR reading of the\\nword's crop)"
    """
    import textwrap

    chars = max(8, int(width_in * 72 / (0.6 * text_pt)))
    return "\n".join(textwrap.fill(line, chars, break_long_words=False) for line in str(text).split("\n"))
