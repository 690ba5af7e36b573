"""What each page of the built book weighs in a browser: the page and everything it loads (scripts, styles,
fonts, images, MathJax's components, fetched by the page's own scripts too), in bytes, measured in headless
Chromium with the book served on loopback (:func:`inkground_lib.publish.linkcheck.serve`).

    python -m inkground_lib.publish.page_weight _build/html [--json weights.json]
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

PAGE_BUDGET = 1_500_000
"""The most a page without math may weigh with everything it loads, in bytes (1.5 MB; issue 35)."""


@dataclass(frozen=True)
class Weight:
    page: str  # path under the book, e.g. "book/glossary.html"
    bytes: int  # the page and every response it loaded (bodies, uncompressed as served)
    requests: int
    mathjax: bool  # whether any MathJax file was loaded
    largest: tuple[tuple[str, int], ...]  # the three largest files: (path, bytes)


def book_pages(folder: Path) -> list[str]:
    """Every HTML page of the built book but Sphinx's generated index and search pages."""
    folder = Path(folder)
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.html")
                  if p.name not in ("genindex.html", "search.html") and "_static" not in p.parts
                  and p.relative_to(folder).as_posix() != "index.html")


def measure(folder: Path, pages: list[str] | None = None, settle_ms: int = 1500) -> list[Weight]:
    """Load each page in Chromium (1400 x 900), wait until the network is idle and ``settle_ms`` more, and add up
    the bodies of all responses. Requests to other hosts are aborted (and not counted)."""
    from inkground_lib.publish.chromium import in_browser
    from inkground_lib.publish.linkcheck import serve

    pages = pages if pages is not None else book_pages(folder)
    with serve(folder, "/inkground/") as base:
        return in_browser(lambda b: [_weigh(b, base, name, settle_ms) for name in pages])


def _weigh(b, base: str, name: str, settle_ms: int) -> Weight:
    """One page's :class:`Weight` in browser ``b`` (the book served at ``base``)."""
    ctx = b.new_context(viewport={"width": 1400, "height": 900}, service_workers="block")
    page = ctx.new_page()
    sizes: dict[str, int] = {}

    def route(r, request):
        r.continue_() if request.url.startswith(base) else r.abort()

    def done(resp):
        try:
            sizes[resp.url] = len(resp.body())
        except Exception:  # a redirect or an aborted body has none
            sizes.setdefault(resp.url, 0)

    page.route("**/*", route)
    page.on("response", done)
    page.goto(base + name, wait_until="networkidle")
    page.wait_for_timeout(settle_ms)
    ctx.close()
    top = sorted(sizes.items(), key=lambda kv: -kv[1])[:3]
    return Weight(name, sum(sizes.values()), len(sizes), any("mathjax" in u.lower() for u in sizes),
                  tuple((u[len(base):], n) for u, n in top))


def table(weights: list[Weight]) -> str:
    lines = [f"{'page':48s} {'kB':>8s} {'requests':>8s}  MathJax  largest"]
    for w in weights:
        big = ", ".join(f"{Path(u).name} {n / 1000:.0f} kB" for u, n in w.largest)
        lines.append(f"{w.page:48s} {w.bytes / 1000:8.0f} {w.requests:8d}  {'yes' if w.mathjax else 'no ':7s}  {big}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    weights = measure(a.folder)
    print(table(weights))
    if a.json:
        a.json.write_text(json.dumps([w.__dict__ for w in weights], indent=1))
    over = [w for w in weights if not w.mathjax and w.bytes > PAGE_BUDGET]
    print(f"{len(over)} page(s) without math over {PAGE_BUDGET / 1e6:.1f} MB")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
