"""Small text helpers shared by every layer."""

from __future__ import annotations


def short_reason(reason: str) -> str:
    """The first clause of a 'cannot run here' reason, up to the first ';' or sentence end (no secrets are
    ever in these).

    >>> short_reason("environment variable GEMINI_API_KEY is not set; set it and rerun")
    'environment variable GEMINI_API_KEY is not set'
    """
    reason = str(reason)
    cuts = [i for i in (reason.find(";"), reason.find(". ")) if i > 0]
    return reason[:min(cuts)] if cuts else reason
