"""Building a derenderer from its name: the one factory the pseudo-label stage and the systems use.

As for systems and OCR engines, a name maps to a builder in one table (:data:`_BUILDERS`); a name may carry an
argument after a colon (``tracer:<weights .npz>``, ``inksight:<model folder>``). An unknown name, a missing or
unexpected argument, or an object without ``derender`` raises :class:`DerenderError` listing the names.
"""

from __future__ import annotations

from typing import Callable, Optional

from inkground_lib.components.derenderers.base import DerenderError


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


# name -> (builder(argument or None), argument: "none" | "optional" | "required", what it is)
_BUILDERS: dict[str, tuple[Callable, str, str]] = {
    "skeleton": (_skeleton, "none", "the offline stand-in for InkSight (binarise, skeletonise, trace)"),
    "tracer": (_tracer("text"), "optional",
               "inkground's learned tracer, derender with text: given the word's true text ([:<weights .npz>])"),
    "tracer-recognize": (_tracer("recognize"), "optional",
                         "the tracer, recognize and derender: given the OCR reading of the word's crop"),
    "tracer-no-text": (_tracer("none"), "optional", "the tracer given no text"),
    "inksight-small-p": (_inksight, "required", "InkSight Small-p's SavedModel (:<model folder>; TensorFlow)"),
    "inksight": (_inksight, "required", "InkSight's SavedModel (:<model folder>; TensorFlow)"),
}


def derenderer_names() -> list[str]:
    """The names :func:`make_derenderer` accepts, as written (``name[:argument]``)."""
    form = {"none": "{}", "optional": "{}[:<weights .npz>]", "required": "{}:<model folder>"}
    return [form[b[1]].format(n) for n, b in _BUILDERS.items()]


NAMES = tuple(derenderer_names())


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
    inkground_lib.components.derenderers.base.DerenderError: derenderer: unknown name 'pencil'; known: skeleton, tracer[:<weights .npz>], tracer-recognize[:<weights .npz>], tracer-no-text[:<weights .npz>], inksight-small-p:<model folder>, inksight:<model folder>
    """
    if not isinstance(spec, str):
        if not callable(getattr(spec, "derender", None)):
            raise DerenderError(f"derenderer: {spec!r} has no derender(crop, crop_box, text) method")
        return spec
    name, arg = parse_derenderer(spec)
    return _BUILDERS[name][0](arg)


def parse_derenderer(spec: str) -> tuple[str, Optional[str]]:
    """A derenderer name checked without building it (no weights read): (name, argument or None);
    :class:`DerenderError` listing the names for an unknown name, a missing or an unexpected argument.

    >>> parse_derenderer("tracer:w.npz"), parse_derenderer("skeleton")
    (('tracer', 'w.npz'), ('skeleton', None))
    """
    if not isinstance(spec, str):
        raise DerenderError(f"derenderer: {spec!r} is not a name; known: {', '.join(NAMES)}")
    name, sep, arg = spec.partition(":")
    known = ", ".join(NAMES)
    if name not in _BUILDERS:
        raise DerenderError(f"derenderer: unknown name {spec!r}; known: {known}")
    takes = _BUILDERS[name][1]
    if takes == "none" and sep:
        raise DerenderError(f"derenderer: {name!r} takes no argument, got {spec!r}; known: {known}")
    if takes == "required" and not arg:
        raise DerenderError(f"derenderer: {name!r} needs an argument ({name}:<model folder>), got {spec!r}")
    return name, (arg if sep else None)
