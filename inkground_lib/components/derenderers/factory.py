"""Building a derenderer from its name: the one factory the pseudo-label stage and the systems use."""

from __future__ import annotations

from inkground_lib.components.derenderers.base import DerenderError
from inkground_lib.components.derenderers.inksight import InkSightDerenderer
from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer
from inkground_lib.components.derenderers.tracer.derenderer import TracerDerenderer

NAMES = ("skeleton", "tracer", "tracer:<weights .npz>", "inksight-small-p:<model folder>")


def make_derenderer(spec="skeleton"):
    """A derenderer from a name or an object with ``derender(crop, crop_box, text)``.

    Names: "skeleton" (the offline stand-in for InkSight), "tracer" (inkground's learned tracer with the
    shipped weights, :class:`~inkground_lib.components.derenderers.tracer.derenderer.TracerDerenderer`),
    "tracer:<weights .npz>" (other weights, e.g. from ``inkground tracer train``), "inksight-small-p:<model folder>" or
    "inksight:<model folder>" (needs TensorFlow and InkSight's SavedModel; see
    :class:`~inkground_lib.components.derenderers.inksight.InkSightDerenderer`). Raises
    :class:`DerenderError` for an unknown name or an object without ``derender``.
    """
    if not isinstance(spec, str):
        if not callable(getattr(spec, "derender", None)):
            raise DerenderError(f"derenderer: {spec!r} has no derender(crop, crop_box, text) method")
        return spec
    if spec == "skeleton":
        return SkeletonDerenderer()
    if spec == "tracer":
        return TracerDerenderer()
    if spec.startswith("tracer:"):
        return TracerDerenderer(spec.split(":", 1)[1])
    if spec.startswith(("inksight-small-p:", "inksight:")):
        return InkSightDerenderer(spec.split(":", 1)[1])
    raise DerenderError(f"derenderer: unknown name {spec!r}; use one of {', '.join(NAMES)}")
