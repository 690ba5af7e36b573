"""The publishing steps drive Chromium from processes that may have left an asyncio loop running (notebooks
executed and the book built in-process): publish.chromium.in_browser works there too."""

import asyncio

import pytest

import browser_checks


@pytest.mark.browser
def test_in_browser_works_inside_a_running_asyncio_loop():
    from inkground_lib.publish.chromium import browser, in_browser

    browser_checks.require_chromium()

    async def inside_a_loop():
        with pytest.raises(Exception, match="asyncio loop"):  # what Playwright's sync API does on this thread
            with browser():
                pass
        return in_browser(lambda b: b.new_page().evaluate("() => 6 * 7"))

    assert asyncio.run(inside_a_loop()) == 42
