"""Readability: character accuracy rate (AR) and correct rate (CR) of OCR text against the target word.

The OCR text of a rendered prediction (hypothesis) is aligned to the target word (reference) by a
Levenshtein alignment (rapidfuzz) after :func:`normalise_text`; :func:`edit_counts` gives the
substitutions, deletions and insertions (:class:`EditCounts`), :func:`char_rates` the per-word AR and CR,
and :func:`corpus_char_rates` the corpus rates from counts summed over words.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from typing import Iterable

from rapidfuzz.distance import Levenshtein

__all__ = ["EditCounts", "char_rates", "corpus_char_rates", "edit_counts", "normalise_text"]


@dataclass(frozen=True)
class EditCounts:
    r"""Character edit counts of one word, or summed over many words with ``+``.

    Attributes
    ----------
    S : int
        Substitutions.
    D : int
        Deletions: reference characters missing from the hypothesis.
    I : int
        Insertions: extra hypothesis characters.
    N : int
        Number of reference characters after :func:`normalise_text`.

    Notes
    -----
    The properties ``hits``, ``ar`` and ``cr`` are

    .. math::

        H = N - S - D, \qquad
        \mathrm{AR} = \frac{N - S - D - I}{N}, \qquad
        \mathrm{CR} = \frac{N - S - D}{N},

    with AR and CR NaN when N = 0. AR is not clipped: it is negative when I > N - S - D. CR is in [0, 1].

    Examples
    --------
    >>> from inkground_lib.components.metrics.readability import EditCounts
    >>> c = EditCounts(S=0, D=1, I=0, N=5)  # 'hello' read as 'helo'
    >>> c.hits, c.ar, c.cr
    (4, 0.8, 0.8)
    >>> c + EditCounts(S=0, D=1, I=1, N=2)
    EditCounts(S=0, D=2, I=1, N=7)
    >>> EditCounts(S=0, D=0, I=3, N=1).ar
    -2.0
    """

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
        """Hits H = N - S - D: reference characters read correctly."""
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
    """Text as compared for AR and CR.

    In order: Unicode NFC; white space at either end removed; with ``strip_punct``, punctuation (Unicode
    categories P*) and white space at either edge removed repeatedly (inner punctuation and spaces kept);
    with ``casefold``, ``str.casefold`` (so 'ß' becomes 'ss') and NFC again.

    Parameters
    ----------
    text : str or None
        The text; ``None`` (nothing recognised) counts as ''.
    casefold : bool, optional
        Compare case-insensitively (default True).
    strip_punct : bool, optional
        Strip edge punctuation (default True).

    Returns
    -------
    str
        The normalised text.

    Raises
    ------
    TypeError
        If ``text`` is neither a string nor None.

    Examples
    --------
    >>> from inkground_lib.components.metrics.readability import normalise_text
    >>> normalise_text('  «Hello, World!» ')
    'hello, world'
    >>> normalise_text('Straße'), normalise_text('Straße', casefold=False)
    ('strasse', 'Straße')
    >>> normalise_text('"Wait..."'), normalise_text(None)
    ('wait', '')
    """
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
    r"""S, D, I, N of a hypothesis (OCR of the rendered prediction) against the reference word.

    Parameters
    ----------
    hyp : str or None
        The hypothesis (OCR text); ``None`` (nothing recognised) counts as ''.
    ref : str
        The reference (target word).
    casefold, strip_punct : bool, optional
        Passed to :func:`normalise_text`, which both texts go through (defaults True).

    Returns
    -------
    EditCounts
        S, D, I and N = number of characters of the normalised reference.

    Notes
    -----
    The alignment is ``rapidfuzz.distance.Levenshtein.editops(ref, hyp)`` (turn the reference into the
    hypothesis; unit costs): 'replace' = S, 'delete' = D, 'insert' = I; so

    .. math::

        S + D + I = \operatorname{lev}(\mathrm{ref}, \mathrm{hyp}), \qquad N = |\mathrm{ref}|,

    and AR does not depend on the alignment chosen. CR does, and rapidfuzz (3.14, as
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

    Examples
    --------
    >>> from inkground_lib.components.metrics.readability import edit_counts
    >>> edit_counts('helo', 'hello')  # one reference 'l' missing
    EditCounts(S=0, D=1, I=0, N=5)
    >>> edit_counts('ba', 'ab')  # a transposition
    EditCounts(S=0, D=1, I=1, N=2)
    >>> edit_counts('Hullo!', 'hello')  # normalised to 'hullo': one substitution
    EditCounts(S=1, D=0, I=0, N=5)
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
    r"""Accuracy rate and correct rate of one word's OCR text against its target word.

    Parameters
    ----------
    hyp : str or None
        The hypothesis (OCR text); ``None`` counts as ''.
    ref : str
        The reference (target word).
    casefold, strip_punct : bool, optional
        Passed to :func:`normalise_text` (defaults True).

    Returns
    -------
    (float, float)
        (AR, CR); (NaN, NaN) when the normalised reference is empty.

    Notes
    -----
    With S, D, I, N from :func:`edit_counts`:

    .. math::

        \mathrm{AR} = \frac{N - S - D - I}{N}, \qquad \mathrm{CR} = \frac{N - S - D}{N}.

    AR is not clipped (it can be negative); CR is in [0, 1].

    Examples
    --------
    >>> from inkground_lib.components.metrics.readability import char_rates
    >>> char_rates('helo', 'hello')  # D = 1, N = 5
    (0.8, 0.8)
    >>> char_rates('ba', 'ab')  # D = 1, I = 1, N = 2
    (0.0, 0.5)
    >>> char_rates('hi', '?!')  # the reference is empty after normalisation
    (nan, nan)
    """
    c = edit_counts(hyp, ref, casefold=casefold, strip_punct=strip_punct)
    return c.ar, c.cr


def corpus_char_rates(items: Iterable, *, casefold: bool = True, strip_punct: bool = True) -> tuple[float, float]:
    r"""Corpus accuracy rate and correct rate: S, D, I, N summed over words, then one ratio.

    This is not the mean of the per-word rates: long words weigh more, and a word with an empty reference
    still adds its insertions.

    Parameters
    ----------
    items : iterable
        :class:`EditCounts` or ``(hyp, ref)`` string pairs (mixing is allowed); pairs go through
        :func:`edit_counts`.
    casefold, strip_punct : bool, optional
        Passed to :func:`normalise_text` for the pairs (defaults True).

    Returns
    -------
    (float, float)
        (AR, CR), not clipped (AR can be negative); (NaN, NaN) if the summed N is 0.

    Raises
    ------
    TypeError
        If an item is neither EditCounts nor a pair.

    Notes
    -----
    Over words :math:`w`:

    .. math::

        \mathrm{AR} = \frac{\sum_w (N_w - S_w - D_w - I_w)}{\sum_w N_w}, \qquad
        \mathrm{CR} = \frac{\sum_w (N_w - S_w - D_w)}{\sum_w N_w}.

    Examples
    --------
    >>> from inkground_lib.components.metrics.readability import EditCounts, corpus_char_rates
    >>> ar, cr = corpus_char_rates([('helo', 'hello'), ('ba', 'ab')])  # S = 0, D = 2, I = 1, N = 7
    >>> round(ar, 4), round(cr, 4)
    (0.5714, 0.7143)
    >>> corpus_char_rates([EditCounts(S=0, D=0, I=3, N=1)])  # not clipped
    (-2.0, 1.0)
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
