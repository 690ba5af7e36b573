"""The versions of Python and of installed distributions, as a trained model's record keeps them."""

from __future__ import annotations


def library_versions(dists) -> dict:
    """{"python": version, dist: version or None for each of ``dists``} (distribution names as pip knows them):
    the libraries that decide a model's weights, recorded beside them (other versions may give other weights)."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in dists:
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out
