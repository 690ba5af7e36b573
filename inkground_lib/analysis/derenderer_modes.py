"""A derenderer mode by its one displayed name: what the command line and the notebooks' parameters call it
(``skeleton``, ``tracer-recognize``, ``tracer``, ``tracer-no-text``, ``inksight-small-p``: the names of
:mod:`inkground_lib.components.derenderers.factory`). A run records the tracer's mode in two fields (the
derenderer's own name, always ``tracer``, and its text mode, ``recognize`` / ``text`` / ``none``); these
functions put them back together, so no page calls the tracer given the OCR reading by the name of the tracer
given the true text. Internal keys (cache keys, run records, file names) are unchanged. The book's glosses of
each mode: :mod:`inkground_lib.report.names`."""

from __future__ import annotations

from typing import Mapping

from inkground_lib.pseudo.derender_stage import TEXT_SOURCES

TRACER_MODES = {"recognize": "tracer-recognize", "text": "tracer", "none": "tracer-no-text"}
"""The tracer's text mode (``derenderer_config.settings.text_mode``) -> its name as the command line writes it."""


def mode_name(derenderer: str | None, text_mode: str | None = None) -> str:
    """The displayed name of a derenderer in a text mode: the tracer's three modes get their command-line names,
    every other derenderer keeps its own (its argument after a colon dropped).

    >>> mode_name("tracer", "recognize"), mode_name("tracer", "text"), mode_name("tracer"), mode_name("skeleton")
    ('tracer-recognize', 'tracer', 'tracer', 'skeleton')
    >>> mode_name("tracer-recognize:w.npz"), mode_name("inksight-small-p:/models/x")
    ('tracer-recognize', 'inksight-small-p')
    """
    name = str(derenderer or "unknown").split(":", 1)[0]
    if name == "tracer" and text_mode:
        return TRACER_MODES.get(str(text_mode), f"tracer ({text_mode})")
    return name


def summary_mode(summary: Mapping | None) -> str:
    """The displayed derenderer mode of a section-02 run from its summary (``summary.json``'s components and
    params): the text mode from the params, else from the components' words for it.

    >>> summary_mode({"components": {"derenderer": "tracer", "derenderer_text": "the OCR reading of the word's crop"}})
    'tracer-recognize'
    >>> summary_mode({"components": {"derenderer": "tracer"}, "params": {"derenderer_text_mode": "text"}})
    'tracer'
    """
    s = summary or {}
    comp, params = s.get("components") or {}, s.get("params") or {}
    mode = params.get("derenderer_text_mode")
    if not mode and comp.get("derenderer_text"):
        mode = {v: k for k, v in TEXT_SOURCES.items()}.get(comp["derenderer_text"])
    return mode_name(comp.get("derenderer") or params.get("derenderer"), mode)


def manifest_mode(meta: Mapping | None) -> str:
    """The displayed mode of the derenderer that made a benchmark set's pseudo-labels, from its manifest's meta
    (``derenderer`` and ``derenderer_config.settings.text_mode``, written by section 02); "unknown" where it
    does not say.

    >>> manifest_mode({"derenderer": "tracer", "derenderer_config": {"settings": {"text_mode": "recognize"}}})
    'tracer-recognize'
    >>> manifest_mode({})
    'unknown'
    """
    m = meta or {}
    settings = (m.get("derenderer_config") or {}).get("settings") or {}
    return mode_name(m.get("derenderer") or "unknown", settings.get("text_mode"))
