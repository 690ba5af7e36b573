"""The built book served under a path prefix, as GitHub Pages serves a project (``/<repository>/``), on loopback:
every page reachable from the front page is fetched, and every link, script, stylesheet, image, font and
download it names, with the anchors it points to. A link that leaves the prefix (a root-absolute ``/_static/``),
a missing file or a missing anchor is a broken link. Links to other hosts are listed, never fetched.

    python -m inkground_lib.publish.linkcheck _build/html --prefix /inkground/
"""

from __future__ import annotations

import html.parser
import http.server
import re
import sys
import threading
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

LINK_ATTRS = {"a": "href", "link": "href", "script": "src", "img": "src", "source": "src", "iframe": "src",
              "video": "src", "audio": "src", "embed": "src", "object": "data"}
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)""")


class _Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str]] = []  # (tag, url)
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "refresh":
            m = re.search(r"url\s*=\s*['\"]?([^'\";]+)", a.get("content") or "", re.I)
            if m:
                self.refs.append((tag, m.group(1)))
        attr = LINK_ATTRS.get(tag)
        if attr and a.get(attr):
            if tag == "link" and not (set((a.get("rel") or "").split()) & {"stylesheet", "icon", "preload", "prev",
                                                                            "next", "index", "search",
                                                                            "shortcut", "alternate"}):
                return
            self.refs.append((tag, a[attr]))
        if tag in ("img", "source") and a.get("srcset"):
            for part in a["srcset"].split(","):
                if part.strip():
                    self.refs.append((tag, part.split()[0]))


@contextmanager
def serve(folder: Path, prefix: str = "/"):
    """Serve ``folder`` at ``http://127.0.0.1:<port><prefix>`` on loopback (anything outside the prefix: 404);
    yields the base URL."""
    folder = Path(folder).resolve()
    prefix = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(folder), **kw)

        def translate_path(self, path):
            p = urlsplit(path).path
            if not p.startswith(prefix):
                return str(folder / ".outside-the-prefix" / "404")  # no such file: 404
            return super().translate_path("/" + p[len(prefix):])

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{prefix}"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Report:
    pages: int = 0
    fetched: int = 0
    broken: list[str] = field(default_factory=list)
    external: set[str] = field(default_factory=set)


def _fetch(url: str) -> tuple[int, bytes, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read(), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        return e.code, b"", ""


def check(folder: Path, prefix: str = "/inkground/", start: str = "index.html") -> Report:
    """Serve ``folder`` under ``prefix`` and follow every link and asset from ``start`` (see the module doc)."""
    rep = Report()
    with serve(folder, prefix) as base:
        host = urlsplit(base).netloc
        todo = [(base + start, "(start)")]
        seen: dict[str, tuple[int, bytes, str]] = {}
        anchors: list[tuple[str, str, str]] = []  # (page url, fragment, where)
        ids: dict[str, set[str]] = {}
        while todo:
            url, where = todo.pop()
            if url in seen:
                continue
            seen[url] = status, body, ctype = _fetch(url)
            rep.fetched += 1
            if status != 200:
                rep.broken.append(f"{url[len(base) - len(prefix):] if url.startswith(base) else url}: HTTP "
                                  f"{status} (linked from {where})")
                continue
            path = urlsplit(url).path
            if "html" in ctype or path.endswith((".html", "/")):
                rep.pages += 1
                page = _Page()
                page.feed(body.decode("utf-8", "replace"))
                ids[url] = page.ids
                refs = [r for _, r in page.refs]
            elif "css" in ctype or path.endswith(".css"):
                refs = CSS_URL.findall(body.decode("utf-8", "replace"))
            else:
                continue
            short = path[len(urlsplit(base).path):] or start
            for ref in refs:
                ref = ref.strip()
                if not ref or ref.startswith(("data:", "mailto:", "javascript:", "tel:", "about:")):
                    continue
                target = urljoin(url, ref)
                parts = urlsplit(target)
                if parts.scheme not in ("http", "https"):
                    continue
                if parts.netloc != host:
                    rep.external.add(target)
                    continue
                bare, frag = urldefrag(target)
                if not urlsplit(bare).path.startswith(urlsplit(base).path):
                    rep.broken.append(f"{short}: {ref} leaves the prefix {prefix} (-> {urlsplit(bare).path})")
                    continue
                if frag and bare == urldefrag(url)[0] and not ("html" in ctype or path.endswith(".html")):
                    continue
                if frag:
                    anchors.append((bare, unquote(frag), short))
                todo.append((bare, short))
        for page, frag, where in anchors:
            if page in ids and frag not in ids[page] and seen.get(page, (0,))[0] == 200:
                rep.broken.append(f"{where}: #{frag} is not an anchor of {page[len(base):] or start}")
    rep.broken = sorted(set(rep.broken))
    return rep


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--prefix", default="/inkground/")
    a = ap.parse_args(argv)
    if not (a.folder / "index.html").is_file():
        print(f"linkcheck: no {a.folder / 'index.html'}: build the book first (make book)", file=sys.stderr)
        return 2
    rep = check(a.folder, a.prefix)
    print(f"linkcheck: {rep.pages} pages and {rep.fetched - rep.pages} other files fetched under {a.prefix}; "
          f"{len(rep.external)} links to other hosts not followed; {len(rep.broken)} broken")
    for b in rep.broken:
        print("  " + b)
    return 1 if rep.broken else 0


if __name__ == "__main__":
    sys.exit(main())
