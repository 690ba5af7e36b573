"""Headless Chromium for the publishing steps (the whole-book PDF, page weights): Debian's ``/usr/bin/chromium``
(``apt-get install -y chromium``) driven by Playwright's sync API (``BrowserType.launch(executable_path=...)``,
https://playwright.dev/python/docs/api/class-browsertype, as requirements.txt notes); never a downloaded
browser (``playwright install`` is never run)."""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-quic", "--no-first-run"]


class NoChromium(RuntimeError):
    """No system Chromium (or no Playwright) here."""


def chromium_path() -> str:
    """The system Chromium: $INKGROUND_CHROMIUM, else chromium / chromium-browser / google-chrome on PATH."""
    env = os.environ.get("INKGROUND_CHROMIUM")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise NoChromium("no Chromium found: install Debian's (apt-get install -y chromium) or set INKGROUND_CHROMIUM")


@contextmanager
def browser():
    """A headless Playwright Browser on the system Chromium, closed on exit."""
    exe = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        raise NoChromium(f"playwright is not installed ({e}); pip install -r requirements.txt") from None
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def in_browser(work):
    """``work(browser)`` run on a thread of its own, its result returned (its exception raised here).

    Playwright's sync API refuses to start in a thread whose asyncio loop is running - which a caller that has
    executed notebooks or built the book in-process may leave behind (nbclient, Sphinx extensions); a new
    thread has none."""
    def run():
        with browser() as b:
            return work(b)

    with ThreadPoolExecutor(1, thread_name_prefix="inkground-chromium") as pool:
        return pool.submit(run).result()
