"""Options several ``inkground`` commands share."""

from __future__ import annotations

import argparse
from typing import Callable


def overwrite_option(parser) -> None:
    parser.add_argument("--overwrite", action="store_true",
                        help="write into a non-empty folder that inkground did not create (its files are kept: "
                             "inkground never deletes what it did not write)")


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Every command's help: the description and epilog as written (lists stay lists), options wide enough."""

    def __init__(self, prog):
        super().__init__(prog, max_help_position=32, width=110)


def lazy_defaults(defaults: Callable[[], dict]) -> type:
    """A help formatter that ends each option's help with "(default: X)", X from ``defaults()`` (called only when
    help is shown: the library's own defaults, e.g. SynthParams', without importing numpy for every command)
    for the options whose argparse default is None and whose help does not already say its default."""

    class LazyDefaults(Formatter):
        def _get_help_string(self, action):
            text = action.help or ""
            if action.default is None and "default" not in text and action.dest in _table():
                text = f"{text} (default: {_table()[action.dest]})".strip()
            return text

    cache: dict = {}

    def _table() -> dict:
        if not cache:
            cache.update(defaults())
        return cache

    return LazyDefaults


def describe(parser, text: str, formatter=Formatter, width: int = 100) -> None:
    """Give a command its description (``inkground CMD --help``: ``text``'s paragraphs wrapped to ``width``)
    and the shared formatter."""
    import textwrap

    parser.description = "\n\n".join(textwrap.fill(" ".join(par.split()), width) for par in text.split("\n\n"))
    parser.formatter_class = formatter
