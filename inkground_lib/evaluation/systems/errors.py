"""The systems' errors (standard library only: the registry, which ``make clean`` reads, raises them)."""

from __future__ import annotations


class SystemConfigError(ValueError):
    """A registry entry or a system call that cannot work as configured (names the entry and field)."""


class SystemUnavailable(RuntimeError):
    """A system whose software, weights or hardware are missing here (e.g. InkSight without TensorFlow)."""
