"""inkground: the reproducible companion to the inkGround paper.

The package is laid out like the book, one subpackage per stage, each using only the layers before it:
core, formats, datasets, components, pseudo (section 02), evaluation (section 03), analysis (section 04),
report, then the commands: rate, pipelines, publish, cli. The names below are the stable public API for your
own scripts; they keep working when modules move.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_PUBLIC = {
    "load_dataset": "inkground_lib.core.dataset",
    "Ink": "inkground_lib.core.ink",
    "render_ink": "inkground_lib.core.render",
    "read_inkml": "inkground_lib.formats.inkml",
    "write_inkml": "inkground_lib.formats.inkml_write",
    "dtw": "inkground_lib.components.metrics.trajectory",
    "chamfer": "inkground_lib.components.metrics.trajectory",
    "char_rates": "inkground_lib.components.metrics.readability",
    "parse_strokes": "inkground_lib.evaluation.parse",
    "make_system": "inkground_lib.evaluation.systems.registry",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str):
    """Import a public name on first use (so ``import inkground_lib`` stays cheap)."""
    try:
        module = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module 'inkground_lib' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
