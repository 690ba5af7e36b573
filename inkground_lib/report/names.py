"""One displayed name per derenderer mode, everywhere the book, the front page and the reviewers' page name one.

A derenderer mode is what the command line and the notebooks' parameters call it
(:mod:`inkground_lib.analysis.derenderer_modes`: ``tracer-recognize`` is the tracer given the OCR reading); the
book shows exactly that name, with a gloss where it helps (:data:`MODE_GLOSS`, the derenderer's card), and says what a section-03 row
is to references made by one mode (:func:`maker_note`). Internal keys (cache keys, run records, file names)
are unchanged.
"""

from __future__ import annotations

from inkground_lib.analysis.derenderer_modes import TRACER_MODES, manifest_mode, mode_name, summary_mode  # noqa: F401
from inkground_lib.components.derenderers.factory import DERENDERERS
from inkground_lib.core.registry import LiveMapping, card_view

MODE_GLOSS = card_view(DERENDERERS, "gloss")
"""A derenderer mode -> a few words on what it is (shown in brackets after its name)."""


def labelled(mode: str) -> str:
    """A mode's name with its gloss: "tracer-recognize (learned here; given the OCR reading of the word's crop)".

    >>> labelled("skeleton"), labelled("inksight-small-p")
    ('skeleton (heuristic)', 'inksight-small-p')
    """
    gloss = MODE_GLOSS.get(mode)
    return f"{mode} ({gloss})" if gloss else mode


SYSTEM_OF_MODE = LiveMapping(lambda: {n: d.system for n, d in DERENDERERS.items() if d.system})
"""A derenderer mode -> the section-03 system that runs the same derenderer (its row's ``system``: the ``tracer``
system is the tracer given the word's true text, as every system there is given the target word)."""

SYSTEM_MODE = LiveMapping(lambda: {d.system: d.system for d in DERENDERERS.values() if d.system})
"""A section-03 system that is a derenderer -> its mode (the mode of the system's own name)."""


def maker_note(maker: str, system: str) -> str | None:
    """What a section-03 row of ``system`` is to pseudo-labels made by derenderer mode ``maker``: "made these
    references" (the same derenderer in the same mode), "its network made these references, as <maker>" (the
    tracer in another text mode), or None (an unrelated system).

    >>> maker_note("tracer-recognize", "tracer"), maker_note("skeleton", "skeleton"), maker_note("skeleton", "font")
    ('its network made these references, as tracer-recognize', 'made these references', None)
    """
    if SYSTEM_OF_MODE.get(maker) != system:
        return None
    if SYSTEM_MODE.get(system) == maker:
        return "made these references"
    return f"its network made these references, as {maker}"
