"""The derenderers, one row each: how to build it from its name, and its card (what the book, the tables and
``make clean`` say about it). The pseudo-label stage (section 02) builds them here, and each row whose card serves
section 03 is a section-03 system adapter as well (:func:`inkground_lib.evaluation.systems.registry.adapters`):
a new derenderer is one row of :data:`DERENDERERS`.

A name may carry an argument after a colon (``tracer:<weights .npz>``, ``inksight:<model folder>``). An unknown
name raises :class:`~inkground_lib.core.registry.UnknownComponent` listing the names; a missing or unexpected
argument, or an object without ``derender``, :class:`~inkground_lib.components.derenderers.base.DerenderError`.
Standard library only at import (``make clean`` reads the cards): a derenderer's module is imported when one is
built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from inkground_lib.core.registry import Card, lookup


def _skeleton(arg: Optional[str]):
    from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer

    return SkeletonDerenderer()


def _tracer(mode: str) -> Callable:
    def build(arg: Optional[str]):
        from inkground_lib.components.derenderers.tracer.derenderer import TracerDerenderer

        return TracerDerenderer(arg or None, text_mode=mode)

    return build


def _inksight(arg: Optional[str]):
    from inkground_lib.components.derenderers.inksight import InkSightDerenderer

    return InkSightDerenderer(arg)


ARGUMENTS = {"none": "{}", "optional": "{}[:<weights .npz>]", "required": "{}:<model folder>"}
"""What a derenderer's name may carry after a colon -> how its name is written with it."""


@dataclass(frozen=True)
class Derenderer:
    """One derenderer: ``build(argument or None)``, the ``argument`` its name takes (:data:`ARGUMENTS`), its
    ``card``, ``system`` (the section-03 system that runs the same derenderer, "" for none: the tracer's modes
    all run as the ``tracer`` system, given the word's true text) and ``system_fields`` (the registry fields a
    section-03 entry of it may carry besides ``grow``; its card serves "03")."""

    build: Callable
    argument: str
    card: Card
    system: str = ""
    system_fields: frozenset = frozenset()

    def __post_init__(self):
        if self.argument not in ARGUMENTS:
            raise ValueError(f"derenderer: argument must be one of {sorted(ARGUMENTS)}, got {self.argument!r}")


_TRACER = ("the skeleton's strokes ordered and directed by a small network trained here on recorded UNIPEN words of "
           "writers outside this book; an offline stand-in for InkSight Small-p, not a port of it")

DERENDERERS: dict[str, Derenderer] = {
    "skeleton": Derenderer(_skeleton, "none", Card(
        label="Skeleton derenderer (InkSight stand-in)", gloss="heuristic", free=True, stands_in="InkSight",
        text="skeleton, the heuristic derenderer (binarise, skeletonise, trace and order strokes; inkground's "
             "offline stand-in for InkSight Small-p, which needs TensorFlow and its weights)"),
        system="skeleton"),
    "tracer": Derenderer(_tracer("text"), "optional", Card(
        label="inkground tracer (trained here on UNIPEN)", gloss="learned here; given the word's true text",
        free=True, stands_in="InkSight", text=f"tracer, inkground's tracer given the word's true text ({_TRACER})"),
        system="tracer", system_fields=frozenset({"weights"})),
    "tracer-recognize": Derenderer(_tracer("recognize"), "optional", Card(
        gloss="learned here; given the OCR reading of the word's crop", free=True, stands_in="InkSight",
        sections=("02",),
        text="tracer-recognize, inkground's tracer given the OCR reading of the word's crop (the paper's "
             "\"recognize and derender\"; the tracer orders and directs the skeleton's strokes with a small network "
             "trained here on recorded UNIPEN words of writers outside this book; an offline stand-in for InkSight "
             "Small-p, not a port of it)"),
        system="tracer"),
    "tracer-no-text": Derenderer(_tracer("none"), "optional", Card(
        gloss="learned here; given no text", free=True, sections=("02",),
        text="tracer-no-text, inkground's tracer given no text"), system="tracer"),
    "inksight-small-p": Derenderer(_inksight, "required", Card(
        label="InkSight Small-p", sections=("02",),
        text="InkSight Small-p (the paper's derenderer)")),
    "inksight": Derenderer(_inksight, "required", Card(label="InkSight Small-p"),
                           system_fields=frozenset({"model_dir_env", "model", "timeout"})),
}
"""Derenderer name -> :class:`Derenderer` (its builder, argument and card): the one table of derenderers. Section
02 builds them by name (:func:`make_derenderer`); each whose card serves "03" is a section-03 system adapter of the
same name; ``make clean`` keeps the logs of those that are not free."""


def derenderer_names() -> list[str]:
    """The names :func:`make_derenderer` accepts, as written (``name[:argument]``)."""
    return [ARGUMENTS[d.argument].format(n) for n, d in DERENDERERS.items()]


def make_derenderer(spec="skeleton"):
    """A derenderer from a name or an object with ``derender(crop, crop_box, text)``.

    Names (:func:`derenderer_names`): "skeleton"; "tracer" (inkground's learned tracer, shipped weights,
    derender with text: it is given the word's true text), "tracer-recognize" (recognize and derender: the
    pseudo-label stage gives it the OCR reading of the crop, as the paper prompts InkSight), "tracer-no-text";
    each tracer name takes other weights as ``:<weights .npz>`` (e.g. from ``inkground tracer train``);
    "inksight-small-p:<model folder>" or "inksight:<model folder>" (TensorFlow and InkSight's SavedModel; see
    :class:`~inkground_lib.components.derenderers.inksight.InkSightDerenderer`).

    >>> make_derenderer("skeleton").name
    'skeleton'
    >>> make_derenderer("pencil")
    Traceback (most recent call last):
    ...
    inkground_lib.core.registry.UnknownComponent: unknown derenderer 'pencil'; known: skeleton, tracer[:<weights .npz>], tracer-recognize[:<weights .npz>], tracer-no-text[:<weights .npz>], inksight-small-p:<model folder>, inksight:<model folder>
    """
    if not isinstance(spec, str):
        if not callable(getattr(spec, "derender", None)):
            from inkground_lib.components.derenderers.base import DerenderError

            raise DerenderError(f"derenderer: {spec!r} has no derender(crop, crop_box, text) method")
        return spec
    name, arg = parse_derenderer(spec)
    return DERENDERERS[name].build(arg)


def parse_derenderer(spec: str) -> tuple[str, Optional[str]]:
    """A derenderer name checked without building it (no weights read): (name, argument or None);
    UnknownComponent listing the names for an unknown name, DerenderError for a missing or an unexpected
    argument.

    >>> parse_derenderer("tracer:w.npz"), parse_derenderer("skeleton")
    (('tracer', 'w.npz'), ('skeleton', None))
    """
    from inkground_lib.components.derenderers.base import DerenderError

    if not isinstance(spec, str):
        raise DerenderError(f"derenderer: {spec!r} is not a name; known: {', '.join(derenderer_names())}")
    name, sep, arg = spec.partition(":")
    takes = lookup(DERENDERERS, name, "derenderer", derenderer_names()).argument
    if takes == "none" and sep:
        raise DerenderError(f"derenderer: {name!r} takes no argument, got {spec!r}; known: "
                            f"{', '.join(derenderer_names())}")
    if takes == "required" and not arg:
        raise DerenderError(f"derenderer: {name!r} needs an argument ({name}:<model folder>), got {spec!r}")
    return name, (arg if sep else None)
