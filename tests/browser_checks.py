"""Browser checks for the book's pages (a test helper, not library code).

Every check returns a list of human-readable problems (empty = fine), each naming the page, the viewport width
and the element, so that a test can ``assert not problems, "\\n".join(problems)``.

* :func:`check_page` - one page at one viewport width: console errors and page errors, requests that would leave
  the machine (recorded and aborted), raw NaN / None / nan / ``{glue`` in the article's visible text, unrendered
  math (:func:`math_problems`), images and pen-path players without a caption or accessible text, anything in
  the article wider than the article, and tables that do not fit their column or break a word
  (:func:`table_problems`).
* :func:`check_animation` - the first pen-path player advances (two screenshots differ) and, with
  ``prefers-reduced-motion: reduce``, shows the final drawing and stands still.
* :func:`check_player_in_view` - a player far down the page waits until it is scrolled into view, then plays;
  a click on it once finished replays it, and it has a visible replay control.
* :func:`scripts_that_ran` - a page's hostile values stay text: no dialog opens while it loads or prints.
* :func:`check_downloads` - downloadable notebooks / sources and the HTML pages carry no path of the build
  machine and no warning.

Where Jupyter Book 1.x (sphinx-book-theme, myst-nb) puts things: the page body is ``<article class="bd-article">``;
a figure (``{figure}`` or myst-nb ``{glue:figure}``) is ``<figure>`` with a ``<figcaption>``; a bare cell-output
image is ``<div class="cell_output"><img alt="../../_images/<hash>.png">`` (no caption, alt = its own path); the
download button links ``_sources/<docname>.ipynb`` (the executed notebook as the book was given it, papermill's
metadata included) and ``{download}`` files go to ``_downloads/<hash>/``.

Playwright's sync API, as documented on https://playwright.dev/python/docs/api/class-browsertype (``launch``:
``executable_path``, ``args``, ``headless``) and https://playwright.dev/python/docs/api/class-page (events
``console``, ``pageerror``, ``request``; ``route`` / ``Route.abort``; ``emulate_media(reduced_motion=...)``;
``Locator.screenshot``), consulted 2026-11-30; the installed playwright==1.65.2 has these signatures.
"""
from __future__ import annotations

import io
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]
HEIGHT = 900  # viewport height (px) for every check
#: the pen-path player's root element (inkground_lib/report/player.py: ``<svg class="ig-pen-player">``)
PLAYER = "svg.ig-pen-player"
#: the article body: sphinx-book-theme's ``<article class="bd-article">``, else any article / main
ARTICLE = ["article.bd-article", "main .bd-article", "article", "main"]
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")
ANIMATION_WAIT_MS = 700
MAX_PER_KIND = 10  # problems of one kind listed per page (then "... and N more")


def chromium_path() -> str | None:
    """The system Chromium (Debian's /usr/bin/chromium or another on PATH), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


def require_chromium() -> str:
    """The Chromium path; without Chromium (or Playwright) the test fails when CI is "true"/"1", else skips."""
    exe = chromium_path()
    reason = None
    if exe is None:
        reason = "chromium is not installed (apt-get install -y chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "playwright is not installed (pip install -r requirements.txt)"
    if reason is None:
        return exe
    if _ci():
        pytest.fail(f"CI={os.environ.get('CI')}: {reason}")
    pytest.skip(reason)


@contextmanager
def browser(executable: str | None = None) -> Iterator:
    """A headless Playwright Browser on the system Chromium (never a downloaded one); closed on exit."""
    from playwright.sync_api import sync_playwright

    exe = executable or require_chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def _limited(kind: list[str]) -> list[str]:
    if len(kind) <= MAX_PER_KIND:
        return kind
    return kind[:MAX_PER_KIND] + [f"... and {len(kind) - MAX_PER_KIND} more like these"]


@contextmanager
def _open(browser, html_path: Path, width: int, problems: list[str], where: str, *,
          reduced_motion: str = "no-preference", console: bool = False):
    """A fresh context + page at ``width`` x HEIGHT with ``html_path`` loaded. Every request that is not local
    (file:, data:, blob:, about:) is aborted, so nothing leaves the machine, and reported in ``problems``; with
    ``console`` so are console errors and uncaught page errors (listened to from before the page loads)."""
    ctx = browser.new_context(viewport={"width": width, "height": HEIGHT}, reduced_motion=reduced_motion,
                              service_workers="block")
    page = ctx.new_page()
    external: list[str] = []
    errors: list[str] = []

    def route(r):
        if not r.request.url.startswith(LOCAL_SCHEMES):
            external.append(r.request.url)
            r.abort()
        else:
            r.continue_()

    page.route("**/*", route)
    # requests that bypass routing (none expected) and web sockets are still recorded
    page.on("request", lambda req: None if req.url.startswith(LOCAL_SCHEMES) else external.append(req.url))
    page.on("websocket", lambda ws: external.append(ws.url))
    if console:
        page.on("console", lambda m: errors.append(f"{where}: console error: {m.text[:300]}")
                if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(
            f"{where}: page error: {(getattr(e, 'name', '') or 'Error') + ': ' + getattr(e, 'message', str(e))}"[:400]))
    try:
        page.goto(Path(html_path).resolve().as_uri(), wait_until="load")
        page.wait_for_timeout(50)  # late scripts (theme, player) and their errors
        yield page
    finally:
        ctx.close()
        problems.extend(_limited(errors))
        problems.extend(_limited([f"{where}: request to {u} (not a local file; aborted)"
                                  for u in dict.fromkeys(external)]))


def scripts_that_ran(browser, html_path: Path, where: str) -> list[str]:
    """Every dialog (``alert``/``confirm``/``prompt``) a page opens while it loads, is looked at for a moment
    and is printed to PDF, as Chromium prints the book: a hostile value that became markup shows up here
    (payloads call ``alert``). Returns problems naming the page and the dialog's message."""
    problems: list[str] = []
    with _open(browser, html_path, 1280, problems, where) as page:
        ran: list[str] = []

        def seen(d):
            ran.append(d.message)
            d.dismiss()

        page.on("dialog", seen)
        page.reload(wait_until="load")  # the handler listens from the start of this load
        page.wait_for_timeout(300)
        page.pdf()
        page.wait_for_timeout(100)
        problems += [f"{where}: a script ran: {m!r}" for m in ran]
    return problems


_TEXT_JS = r"""([article, words]) => {
  // visible text of the article outside code blocks, scripts, styles and SVG titles / descriptions; inline code
  // (`code`, e.g. ``None`` in prose about a parameter) is exempt from the words but not from "{glue"
  const skip = 'pre, .highlight, script, style, noscript, template, svg title, svg desc';
  const out = [];
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest(skip)) continue;
    if (el.checkVisibility && !el.checkVisibility({visibilityProperty: true})) continue;
    const t = n.nodeValue.replace(/\s+/g, ' ');
    let m = /\{glue/.exec(t);
    if (!m && words && !el.closest('code, kbd, samp')) m = /\b(?:NaN|None|nan)\b/.exec(t);
    if (m) {
      const cls = typeof el.className === 'string' ? el.className.trim() : '';
      const a = Math.max(0, m.index - 50), b = m.index + m[0].length + 30;
      out.push([el.tagName.toLowerCase() + (cls ? '.' + cls.split(/\s+/).join('.') : ''),
                (a > 0 ? '...' : '') + t.slice(a, b).trim() + (b < t.length ? '...' : '')]);
    }
  }
  return out;
}"""

_MEDIA_JS = r"""([article, player]) => {
  const out = [];
  const fileName = /\.(png|svg|jpe?g|gif|webp|bmp|tiff?)$/i;
  const caption = (el) => {
    const fig = el.closest('figure');
    if (!fig) return 'is not inside a <figure>';
    const cap = fig.querySelector('figcaption');
    if (!cap) return 'its <figure> has no <figcaption>';
    if (!cap.textContent.trim()) return 'its <figcaption> is empty';
    return null;
  };
  for (const img of article.querySelectorAll('img')) {
    const src = img.getAttribute('src') || '';
    const base = src.split(/[?#]/)[0].split('/').pop();
    const alt = (img.getAttribute('alt') || '').trim();
    const name = `<img src="${src.length > 90 ? '...' + src.slice(-87) : src}">`;
    if (!alt) out.push(`${name} has no alt text`);
    else if (fileName.test(alt) || alt === src || alt === base || alt === base.replace(/\.[^.]*$/, '')
             || alt.includes('/'))
      out.push(`${name} has a file name for alt text: "${alt.length > 90 ? '...' + alt.slice(-87) : alt}"`);
    const c = caption(img);
    if (c) out.push(`${name} has no caption: ${c}`);
  }
  for (const svg of article.querySelectorAll(player)) {
    const name = `<svg id="${svg.id}" class="${svg.getAttribute('class')}">`;
    const label = (svg.getAttribute('aria-label') || '').trim();
    const title = svg.querySelector(':scope > title');
    if (!label && !(title && title.textContent.trim()))
      out.push(`pen-path player ${name} has no accessible name (aria-label or <title>)`);
    const c = caption(svg);
    if (c) out.push(`pen-path player ${name} has no caption: ${c}`);
  }
  return out;
}"""

_OVERFLOW_JS = r"""([article, player]) => {
  const right = article.getBoundingClientRect().right;
  const out = [];
  if (right > window.innerWidth + 1)
    out.push(['article', 'bd-article', '', Math.round(right - window.innerWidth), 'the viewport', '']);
  const clipping = (st) => ['auto', 'scroll', 'hidden', 'clip'].includes(st.overflowX);
  const boxed = new Map();
  // true if some ancestor between el and the article scrolls or clips horizontally (that box is measured itself)
  const inBox = (el) => {
    const p = el.parentElement;
    if (!p || p === article) return false;
    if (boxed.has(p)) return boxed.get(p);
    const v = clipping(getComputedStyle(p)) || inBox(p);
    boxed.set(p, v);
    return v;
  };
  const replaced = new Set(['IMG', 'SVG', 'svg', 'VIDEO', 'CANVAS', 'IFRAME', 'TABLE', 'OBJECT', 'EMBED']);
  const excess = new Map(), blocks = [];
  for (const el of article.querySelectorAll('*')) {
    if (!el.getClientRects().length || inBox(el)) continue;
    const st = getComputedStyle(el);
    if (st.position === 'fixed' || st.visibility === 'hidden') continue;
    const r = el.getBoundingClientRect();
    // a table (or an svg) is reported as a whole: its rows and cells count as its inline content
    const part = !!(el.parentElement && el.parentElement.closest('table, svg'));
    const inline = part || (st.display === 'inline' && !replaced.has(el.tagName));
    // a block's content may spill out of its box (a long code line, an unbreakable word): scrollWidth sees it
    const content = inline || clipping(st) ? r.right : r.left + el.clientLeft + el.scrollWidth;
    const x = Math.max(r.right, content) - right;
    if (x <= 1) continue;
    excess.set(el, x);
    if (!inline) blocks.push(el);
  }
  // report the innermost blocks: an ancestor whose excess a descendant block explains (within 1 px) is not listed
  const explained = new Set();
  for (const el of blocks)
    for (let a = el.parentElement; a && a !== article; a = a.parentElement)
      if (excess.has(a) && excess.get(el) >= excess.get(a) - 1) explained.add(a);
  const text = (el) => (el.getAttribute('aria-label') || el.textContent || '').replace(/\s+/g, ' ').trim()
    .slice(0, 60);
  const cls = (el) => (typeof el.className === 'string' ? el.className : (el.getAttribute('class') || '')).trim();
  for (const el of blocks) {
    if (explained.has(el)) continue;
    let widest = null;  // the inline element (code, link, pasted glue text) that pokes out furthest
    for (const d of el.querySelectorAll('*'))
      if (excess.has(d) && !blocks.includes(d) && (!widest || excess.get(d) > excess.get(widest))) widest = d;
    const w = widest ? `<${widest.tagName.toLowerCase()}${cls(widest) ? " class='" + cls(widest) + "'" : ''}> `
      + `'${text(widest)}'` : '';
    out.push([el.tagName.toLowerCase(), cls(el), text(el), Math.round(excess.get(el)), 'the article', w]);
  }
  return out;
}"""


# Unrendered math: text the reader sees, outside rendered math (MathJax's <mjx-container>) and code, that holds a
# LaTeX command (\frac, \mathrm), a math delimiter (\( \) \[ \] $$), an inline $...$ pair, or a brace sub- or
# superscript (x_{ij}). A "$" before a digit is a price ("$50"), and a closing "$" must follow a non-space, as in
# TeX's own inline math. MathJax 3 (sphinx-mathjax-offline) typesets after load: MathJax.startup.promise.
MATH_WAIT_MS = 8000
_MATH_JS = r"""async ([article, wait]) => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise)
    await Promise.race([MathJax.startup.promise, new Promise(r => setTimeout(r, wait))]);
  const skip = 'mjx-container, mjx-assistive-mml, code, kbd, samp, pre, .highlight, script, style, noscript, '
    + 'template, svg title, svg desc';
  const latex = /\\[A-Za-z]{2,}|\\[()[\]]|\$\$|\$[^\s$\d](?:[^$]*?[^\s$\\])?\$|[_^]\{/;
  const out = [];
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest(skip)) continue;
    if (el.checkVisibility && !el.checkVisibility({visibilityProperty: true})) continue;
    const t = n.nodeValue.replace(/\s+/g, ' ');
    const m = latex.exec(t);
    if (!m) continue;
    const cls = typeof el.className === 'string' ? el.className.trim() : '';
    const a = Math.max(0, m.index - 40), b = m.index + m[0].length + 40;
    out.push([el.tagName.toLowerCase() + (cls ? '.' + cls.split(/\s+/).join('.') : ''),
              (a > 0 ? '...' : '') + t.slice(a, b).trim() + (b < t.length ? '...' : '')]);
  }
  return out;
}"""

# Tables: each visible table must fit its column (its scroll box, else the article) and no word, number or field
# name in a header or cell may break inside: between two letters or digits ("DT|W", "te|xt", "schema_ve|rsion") or
# inside a number ("0.|287"). A break beside punctuation ("Gemini-|3.1", "box=|(x0,", "page_|id") is a break between
# word parts. A word is a run of non-space characters in one text node; a break is a change of line box between two
# of its characters.
_TABLES_JS = r"""([article]) => {
  const out = [];
  const clipping = (st) => ['auto', 'scroll', 'hidden', 'clip'].includes(st.overflowX);
  const column = (t) => {
    for (let p = t.parentElement; p && p !== article; p = p.parentElement)
      if (clipping(getComputedStyle(p))) return p;
    return article;
  };
  const name = (t) => {
    const fig = t.closest('figure');
    const cap = (fig && fig.querySelector('figcaption')) || t.querySelector('caption');
    let text = cap ? cap.textContent : '';
    const first = t.tHead && t.tHead.rows.length ? t.tHead.rows[0] : t.rows[0];
    if (!text) text = (t.tHead ? 'headed ' : 'starting ') + [...(first ? first.cells : [])]
      .map(c => c.textContent.trim()).join(' | ');
    return text.replace(/\s+/g, ' ').trim().slice(0, 70);
  };
  const line = (node, i) => {
    const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
    const q = [...r.getClientRects()].filter(x => x.width > 0 || x.height > 0);
    return q.length ? q[0].top : null;
  };
  const word = /[\p{L}\p{N}]/u;
  for (const t of article.querySelectorAll('table')) {
    if (!t.getClientRects().length || (t.checkVisibility && !t.checkVisibility({visibilityProperty: true}))) continue;
    if (t.closest('svg')) continue;
    const box = column(t);
    const tr = t.getBoundingClientRect();
    const limit = Math.min(box.getBoundingClientRect().left + box.clientLeft + box.clientWidth,
                           article.getBoundingClientRect().right);
    const over = Math.round(Math.max(tr.right - limit, t.scrollWidth - t.clientWidth));
    if (over > 1) out.push(`table '${name(t)}' is ${over} px wider than its column (it clips or scrolls)`);
    const broken = [];
    for (const cell of t.querySelectorAll('th, td')) {
      if (cell.checkVisibility && !cell.checkVisibility({visibilityProperty: true})) continue;
      const w = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let n = w.nextNode(); n; n = w.nextNode()) {
        const re = /\S{2,}/g; let m;
        while ((m = re.exec(n.nodeValue))) {
          const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
          const tops = new Set([...r.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top)));
          if (tops.size < 2) continue;
          let prev = line(n, m.index), bad = [];
          for (let i = 1; i < m[0].length; i++) {
            const top = line(n, m.index + i);
            const a = m[0][i - 1], b = m[0][i], aa = i > 1 ? m[0][i - 2] : '';
            // inside a word: between two letters or digits, or inside a number (0.|287, 2,|984)
            const inside = (word.test(a) && word.test(b)) || (/[.,]/.test(a) && /\d/.test(aa) && /\d/.test(b));
            if (top !== null && prev !== null && top > prev + 1 && inside)
              bad.push(m[0].slice(0, i) + '|' + m[0].slice(i));
            if (top !== null) prev = top;
          }
          if (bad.length) broken.push(`${cell.tagName === 'TH' || cell.closest('thead') ? 'header' : 'cell'} `
                                      + `'${bad[0]}'`);
        }
      }
    }
    if (broken.length) out.push(`table '${name(t)}' breaks ${broken.length} word(s) inside: `
                                + [...new Set(broken)].slice(0, 6).join(', '));
  }
  return out;
}"""


def math_problems(page, article, where: str) -> list[str]:
    """Unrendered math in the article (after MathJax has typeset, waiting at most :data:`MATH_WAIT_MS`)."""
    return _limited([f"{where}: unrendered math in <{tag}>: {text!r}"
                     for tag, text in page.evaluate(_MATH_JS, [article, MATH_WAIT_MS])])


def table_problems(page, article, where: str) -> list[str]:
    """Tables wider than their column, and words broken inside in a table's headers or cells."""
    return _limited([f"{where}: {p}" for p in page.evaluate(_TABLES_JS, [article])])


def _article(page):
    for sel in ARTICLE:
        handle = page.query_selector(sel)
        if handle is not None:
            return handle
    return None


def check_page(browser, html_path: Path, width: int, *, raw_words: bool = True) -> list[str]:
    """Problems of one page at one viewport ``width`` (height 900): console errors, page errors, requests that
    are not file: / data: (aborted), raw NaN / None / nan as words or ``{glue`` in the article's visible text
    (code blocks, inline code and scripts aside), unrendered math (:func:`math_problems`), images and pen-path
    players without caption or accessible text, elements whose right edge passes the article's by more than 1 px
    outside a box that scrolls or clips horizontally (code blocks may be wider only inside such a box), and tables
    wider than their column or breaking a word inside (:func:`table_problems`).

    ``raw_words=False`` skips the NaN / None / nan words (not ``{glue``): for a hand-written page whose prose
    is about NaN handling."""
    html_path = Path(html_path)
    where = f"{html_path.name} at {width} px"
    problems: list[str] = []
    found: list[str] = []
    with _open(browser, html_path, width, problems, where, console=True) as page:
        article = _article(page)
        if article is None:
            found.append(f"{where}: no article element ({' / '.join(ARTICLE)})")
        else:
            for tag, text in page.evaluate(_TEXT_JS, [article, raw_words]):
                found.append(f"{where}: raw NaN/None/glue in <{tag}>: {text!r}")
            found += _limited([f"{where}: {p}" for p in page.evaluate(_MEDIA_JS, [article, PLAYER])])
            found += _limited([
                f"{where}: <{tag}{' class=' + repr(cls) if cls else ''}> {text!r} extends {px} px past {what}'s "
                f"right edge{' (widest inside: ' + widest + ')' if widest else ''} (put it in a box with "
                f"overflow-x:auto, let it wrap, or give it max-width:100%)"
                for tag, cls, text, px, what, widest in page.evaluate(_OVERFLOW_JS, [article, PLAYER])])
            found += math_problems(page, article, where)
            found += table_problems(page, article, where)
    return problems + found


def _pixels(png: bytes):
    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"), dtype=np.int16)


def _differ(a: bytes, b: bytes, tolerance: int = 8) -> int:
    """Number of pixels whose channels differ by more than ``tolerance`` (all, if the sizes differ)."""
    pa, pb = _pixels(a), _pixels(b)
    if pa.shape != pb.shape:
        return max(pa.shape[0] * pa.shape[1], pb.shape[0] * pb.shape[1])
    return int((abs(pa - pb).max(axis=2) > tolerance).sum())


def _ink(p, background):
    """Pixels clearly unlike the background (any channel more than 48 away), dilated by 2 px."""
    import numpy as np

    ink = abs(p[..., :3] - background).max(axis=2) > 48
    grown = ink.copy()
    for dy in range(-2, 3):
        for dx in range(-2, 3):
            grown |= np.roll(np.roll(ink, dy, axis=0), dx, axis=1)
    return ink, grown


def _ink_mismatch(a: bytes, b: bytes) -> float:
    """Share of the ink (in either picture) with no ink of the other picture within 2 px: 0 for the same drawing
    rendered twice (anti-aliasing aside), large when strokes are missing."""
    import numpy as np

    pa, pb = _pixels(a), _pixels(b)
    if pa.shape != pb.shape:
        return 1.0
    colours, counts = np.unique(pa[..., :3].reshape(-1, 3), axis=0, return_counts=True)
    background = colours[counts.argmax()]
    ia, ga = _ink(pa, background)
    ib, gb = _ink(pb, background)
    total = int(ia.sum() + ib.sum())
    return float(((ia & ~gb).sum() + (ib & ~ga).sum()) / total) if total else 0.0


def _shot(page, player) -> bytes:
    """A screenshot of the player's box (as on screen: the viewport is clipped, nothing is re-laid out)."""
    return page.screenshot(clip=player.bounding_box(), animations="allow")


_RESTART_JS = """el => { const a = el.getAnimations({subtree: true});
  a.forEach(x => { x.currentTime = 0; }); return a.length; }"""
_FINISH_JS = """el => { const a = el.getAnimations({subtree: true});
  a.forEach(x => { try { x.finish(); } catch (e) {} }); return a.length; }"""


# the replay control and the hint line are not the drawing (reduced motion hides the control): hidden for the
# comparison of the finished animation with the reduced-motion picture
_HIDE_CONTROLS_JS = """el => el.querySelectorAll('.rp, .hint').forEach(x => { x.style.visibility = 'hidden'; })"""


def check_animation(browser, html_path: Path, width: int = 1400) -> list[str]:
    """Problems of the page's first pen-path player (``svg.ig-pen-player``): it must exist; restarted from its
    first frame, two screenshots of its box ~700 ms apart must differ; with ``prefers-reduced-motion: reduce`` it
    must run no animation, two screenshots must be equal and match the finished animation (the final drawing)."""
    html_path = Path(html_path)
    where = f"{html_path.name} at {width} px"
    problems: list[str] = []
    final = None
    with _open(browser, html_path, width, problems, where) as page:
        player = page.locator(PLAYER).first
        if page.locator(PLAYER).count() == 0:
            problems.append(f"{where}: no pen-path player ({PLAYER}) on the page")
        else:
            fid = player.get_attribute("id")
            player.scroll_into_view_if_needed()
            n = player.evaluate(_RESTART_JS)  # from its first frame, however long the page took to load
            first = _shot(page, player)
            page.wait_for_timeout(ANIMATION_WAIT_MS)
            second = _shot(page, player)
            if n == 0:
                problems.append(f"{where}: the pen-path player #{fid} runs no CSS animation")
            if not _differ(first, second):
                problems.append(f"{where}: the pen-path player #{fid} does not advance: two screenshots "
                                f"{ANIMATION_WAIT_MS} ms apart are identical")
            player.evaluate(_FINISH_JS)
            player.evaluate(_HIDE_CONTROLS_JS)
            page.wait_for_timeout(50)
            final = _shot(page, player)
    if final is None or n == 0:
        return problems  # no player, or nothing animates: there is no motion to reduce
    with _open(browser, html_path, width, problems, f"{where}, reduced motion", reduced_motion="reduce") as page:
        player = page.locator(PLAYER).first
        player.scroll_into_view_if_needed()
        running = player.evaluate("el => el.getAnimations({subtree: true}).length")
        player.evaluate(_HIDE_CONTROLS_JS)
        still_a = _shot(page, player)
        page.wait_for_timeout(ANIMATION_WAIT_MS)
        still_b = _shot(page, player)
        fid = player.get_attribute("id")
        if running:
            problems.append(f"{where}, reduced motion: the pen-path player #{fid} still runs {running} animations")
        if _differ(still_a, still_b, tolerance=0):
            problems.append(f"{where}, reduced motion: the pen-path player #{fid} moves: two screenshots "
                            f"{ANIMATION_WAIT_MS} ms apart differ")
        missing = _ink_mismatch(still_a, final)
        if missing > 0.02:
            problems.append(f"{where}, reduced motion: the pen-path player #{fid} does not show the final drawing "
                            f"({missing:.0%} of the ink differs from the finished animation's)")
    return problems


_STATE_JS = """el => { const a = el.getAnimations({subtree: true});
  return {n: a.length, t: a.reduce((m, x) => Math.max(m, Number(x.currentTime) || 0), 0),
          running: a.filter(x => x.playState === 'running').length,
          finished: a.filter(x => x.playState === 'finished').length}; }"""
FAR_DOWN = 1.5  # a player "far down" starts at least this many viewport heights below the top of the page


def check_player_in_view(browser, html_path: Path, width: int = 1400) -> list[str]:
    """Problems of the page's last pen-path player that starts at least :data:`FAR_DOWN` viewport heights down:
    it must not advance (nor have finished) while it is out of view, must advance once scrolled into view (two
    screenshots ~700 ms apart differ), must play again when clicked once finished, and must show a visible
    replay control (``.rp``) that replays it."""
    html_path = Path(html_path)
    where = f"{html_path.name} at {width} px"
    problems: list[str] = []
    with _open(browser, html_path, width, problems, where) as page:
        tops = page.eval_on_selector_all(PLAYER, "els => els.map(e => e.getBoundingClientRect().top + scrollY)")
        far = [i for i, top in enumerate(tops) if top >= FAR_DOWN * HEIGHT]
        if not far:
            problems.append(f"{where}: no pen-path player starts {FAR_DOWN:g} screens or more down the page "
                            f"({len(tops)} players)")
            return problems
        player = page.locator(PLAYER).nth(far[-1])
        fid = player.get_attribute("id")
        name = f"the pen-path player #{fid} ({tops[far[-1]]:.0f} px down)"
        before = player.evaluate(_STATE_JS)
        page.wait_for_timeout(ANIMATION_WAIT_MS)
        later = player.evaluate(_STATE_JS)
        if later["n"] == 0:
            problems.append(f"{where}: {name} runs no CSS animation")
            return problems
        if later["finished"] == later["n"]:
            problems.append(f"{where}: {name} played before it came into view: all {later['n']} animations had "
                            f"finished before the reader scrolled to it")
        elif later["t"] > before["t"] + 1:
            problems.append(f"{where}: {name} advances out of view ({before['t']:.0f} -> {later['t']:.0f} ms in "
                            f"{ANIMATION_WAIT_MS} ms)")
        player.scroll_into_view_if_needed()
        page.wait_for_timeout(100)  # the IntersectionObserver's callback
        first = _shot(page, player)
        page.wait_for_timeout(ANIMATION_WAIT_MS)
        second = _shot(page, player)
        if not _differ(first, second):
            problems.append(f"{where}: {name} does not advance once scrolled into view (two screenshots "
                            f"{ANIMATION_WAIT_MS} ms apart are identical)")
        for how in ("a click on it", "its replay control"):
            player.evaluate(_FINISH_JS)
            page.wait_for_timeout(50)
            final = _shot(page, player)
            if how == "a click on it":
                box = player.bounding_box()
                page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.6)
            else:
                control = player.locator(".rp")
                if control.count() == 0 or not control.first.is_visible():
                    problems.append(f"{where}: {name} has no visible replay control (.rp)")
                    continue
                control.first.click()
            state = player.evaluate(_STATE_JS)  # at once: a replay of a short drawing may end within a screenshot
            # replayed: its animations run again, or much of the drawing is gone (a focus ring or a re-rendered
            # photo changes pixels, not the ink)
            if not state["running"] and _ink_mismatch(final, _shot(page, player)) <= 0.02:
                problems.append(f"{where}: {how} does not replay {name} once finished ({state['running']} "
                                f"animations running)")
    return problems


def _forbidden(build_root: Path, sources: Iterable) -> list[str]:
    """The build machine's paths to look for: the build root (as given and resolved), its home directory or
    temporary-directory prefix (e.g. /tmp/pytest-of-root), and every path in ``sources``."""
    out = []
    for p in [build_root, *sources]:
        p = Path(p)
        out += [str(p), str(p.resolve())]
    root = Path(build_root).resolve()
    home = Path.home().resolve()
    tmp = Path(tempfile.gettempdir()).resolve()
    if root.is_relative_to(home) and home != Path("/"):
        out.append(str(home) + "/")
    for base in {tmp, Path("/tmp"), Path("/var/tmp")}:
        if root.is_relative_to(base) and root != base:
            out.append(str(base / root.relative_to(base).parts[0]))
    return [s for s in dict.fromkeys(out) if len(s) > 1]


def _snippet(text: str, i: int, n: int) -> str:
    return text[max(0, i - 40):i + n + 80].replace("\n", " ")


def check_downloads(build_html_dir: Path, build_root: Path, sources: Iterable = ()) -> list[str]:
    """Problems of the built site's downloadable files (every file under ``_sources/`` and ``_downloads/``:
    the executed notebooks behind the download button, the pages' sources, {download} files) and of every HTML
    page: a path of the build machine (``build_root``, its home or temp-dir prefix, each of ``sources``, e.g. the
    repository the notebooks were executed from) or the word "Warning" (case-sensitive: TqdmWarning,
    UserWarning, "Warning: IProgress not found", ...)."""
    site = Path(build_html_dir)
    if not site.is_dir():
        return [f"{site}: the built site does not exist"]
    files = [f for d in ("_sources", "_downloads") for f in sorted((site / d).rglob("*")) if f.is_file()]
    files += sorted(f for f in site.rglob("*.html") if not f.is_relative_to(site / "_static"))
    needles = sorted(_forbidden(Path(build_root), sources), key=len, reverse=True)
    problems = []
    for f in files:
        try:
            text = f.read_text("utf-8")
        except UnicodeDecodeError:
            continue  # a binary download (image, archive): not text the reader sees
        rel = f.relative_to(site)
        seen: set[int] = set()  # where a longer path matched already (the build root inside its /tmp prefix)
        for needle in needles:
            hits = [m.start() for m in re.finditer(re.escape(needle), text) if m.start() not in seen]
            seen.update(hits)
            if hits:
                problems.append(f"{rel}: the build machine's path {needle!r} ({len(hits)}x), e.g. "
                                f"{_snippet(text, hits[0], len(needle))!r}")
        hits = [m.start() for m in re.finditer(r"Warning", text)]
        if hits:
            problems.append(f"{rel}: 'Warning' ({len(hits)}x), e.g. {_snippet(text, hits[0], 7)!r}")
    return problems
