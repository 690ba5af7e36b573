"""Readability: AR and CR from a Levenshtein alignment of OCR text against the target word."""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from typing import Iterable

from rapidfuzz.distance import Levenshtein


@dataclass(frozen=True)
class EditCounts:
    """Character edit counts of one word (or summed over many): substitutions S, deletions D (reference
    characters missing from the hypothesis), insertions I (extra hypothesis characters), and N = number of
    reference characters after normalisation. Hits H = N - S - D."""

    S: int
    D: int
    I: int  # noqa: E741  (the field names are the standard ones)
    N: int

    def __add__(self, other: "EditCounts") -> "EditCounts":
        if not isinstance(other, EditCounts):
            return NotImplemented
        return EditCounts(self.S + other.S, self.D + other.D, self.I + other.I, self.N + other.N)

    @property
    def hits(self) -> int:
        return self.N - self.S - self.D

    @property
    def ar(self) -> float:
        """Accuracy rate (N - S - D - I) / N; can be negative; NaN when N == 0."""
        return (self.N - self.S - self.D - self.I) / self.N if self.N else math.nan

    @property
    def cr(self) -> float:
        """Correct rate (N - S - D) / N, in [0, 1]; NaN when N == 0."""
        return (self.N - self.S - self.D) / self.N if self.N else math.nan


def normalise_text(text: str | None, *, casefold: bool = True, strip_punct: bool = True) -> str:
    """Text as compared for AR / CR: Unicode NFC; surrounding white space removed; with ``strip_punct``,
    punctuation (Unicode categories P*) and white space at either edge removed (inner punctuation kept);
    with ``casefold``, ``str.casefold`` (so 'ß' becomes 'ss') and NFC again. ``None`` counts as ''."""
    if text is None:
        return ""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string or None, got {type(text).__name__}")
    t = unicodedata.normalize("NFC", text).strip()
    if strip_punct:
        a, b = 0, len(t)
        while a < b and (t[a].isspace() or unicodedata.category(t[a]).startswith("P")):
            a += 1
        while b > a and (t[b - 1].isspace() or unicodedata.category(t[b - 1]).startswith("P")):
            b -= 1
        t = t[a:b]
    if casefold:
        t = unicodedata.normalize("NFC", t.casefold())
    return t


def edit_counts(hyp: str | None, ref: str, *, casefold: bool = True, strip_punct: bool = True) -> EditCounts:
    """S, D, I, N of a hypothesis (OCR of the rendered prediction) against the reference word.

    Both texts go through :func:`normalise_text`; ``hyp=None`` (nothing recognised) counts as ''.
    The alignment is ``rapidfuzz.distance.Levenshtein.editops(ref, hyp)`` (turn the reference into the
    hypothesis; unit costs): 'replace' = S, 'delete' = D, 'insert' = I; so S + D + I is always the
    Levenshtein distance and AR does not depend on the alignment chosen. CR does, and rapidfuzz (3.14, as
    pinned in requirements.txt) breaks ties as follows (tested against an explicit backtrace in
    tests/test_metrics.py, so a change of behaviour in an upgrade fails the tests):

    * the common prefix and suffix of the two strings are matched first;
    * the remaining middle is back-traced from the end; at each cell (i, j) (i reference characters,
      j hypothesis characters) it takes a **deletion** whenever D[i][j] = D[i-1][j] + 1; otherwise it
      takes an **insertion** when D[i-1][j-1] = D[i][j-1] + 1 (i.e. D[i][j-1] < D[i-1][j-1]); otherwise
      the diagonal (match or substitution).

    So a transposition 'ab' -> 'ba' is one deletion + one insertion + one match (CR = 0.5, AR = 0), not
    two substitutions (CR = 0).

    An empty reference after normalisation has N = 0: every hypothesis character is an insertion, and
    :func:`char_rates` gives NaN for that word (the corpus rates still count its insertions).
    """
    r = normalise_text(ref, casefold=casefold, strip_punct=strip_punct)
    h = normalise_text(hyp, casefold=casefold, strip_punct=strip_punct)
    s = d = i = 0
    for op in Levenshtein.editops(r, h):
        tag = op[0]
        if tag == "replace":
            s += 1
        elif tag == "delete":
            d += 1
        else:
            i += 1
    return EditCounts(s, d, i, len(r))


def char_rates(hyp: str | None, ref: str, *, casefold: bool = True, strip_punct: bool = True) -> tuple[float, float]:
    """(AR, CR) of one word; NaN, NaN when the normalised reference is empty. See :func:`edit_counts`."""
    c = edit_counts(hyp, ref, casefold=casefold, strip_punct=strip_punct)
    return c.ar, c.cr


def corpus_char_rates(items: Iterable, *, casefold: bool = True, strip_punct: bool = True) -> tuple[float, float]:
    """Corpus (AR, CR): S, D, I, N summed over words, then AR = (N-S-D-I)/N, CR = (N-S-D)/N (not clipped).

    ``items`` are :class:`EditCounts` or (hyp, ref) string pairs (mixing is allowed). NaN, NaN if the summed
    N is 0.
    """
    tot = EditCounts(0, 0, 0, 0)
    for n, it in enumerate(items):
        if isinstance(it, EditCounts):
            tot = tot + it
        elif isinstance(it, (tuple, list)) and len(it) == 2:
            tot = tot + edit_counts(it[0], it[1], casefold=casefold, strip_punct=strip_punct)
        else:
            raise TypeError(f"corpus_char_rates: item {n} must be EditCounts or a (hyp, ref) pair, got {it!r}")
    return tot.ar, tot.cr
