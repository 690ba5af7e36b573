"""Which words are targets: one target, one question.

A request names its word by its text only (the page photo and the word, :mod:`inkground_lib.evaluation.prompt`),
not by which occurrence: on a page where "Thank" is written three times, one answer would be scored against
three references while the box baseline knows the box. The paper's protocol names one word. The rule here (ours:
the paper states none) keeps a question only where its text names one place on its page:

    a word is a target only where its normalised text (:func:`~inkground_lib.components.metrics.readability.
    normalise_text`: NFC, edge punctuation stripped, casefolded) occurs once on its page.

The benchmark builder (section 02) leaves the other words out of the benchmark set and records how many; section
03 applies the same rule to every dataset it scores (:func:`inkground_lib.evaluation.items.target_dataset`).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from inkground_lib.components.metrics.readability import normalise_text

TARGET_RULE = ("a word is a target only where its normalised text (NFC, edge punctuation stripped, casefolded) "
               "occurs once on its page: the request names the word by its text, so a text written twice on a "
               "page names no single occurrence and none of them is asked (our rule; the paper names one word "
               "per request and states no rule for repeated words)")
"""The rule in one sentence, as the benchmark's manifest, section 03 and the book state it."""


def target_mask(texts: Sequence[str]) -> list[bool]:
    """For the words of ONE page (their texts, in order): True where the word is a target (its normalised text
    occurs once on the page), False for every occurrence of a repeated text.

    >>> target_mask(["Thank", "you", "thank", "so", "much!", "much"])
    [False, True, False, True, False, False]
    >>> target_mask([])
    []
    """
    keys = [normalise_text(t) for t in texts]
    counts = Counter(keys)
    return [counts[k] == 1 for k in keys]
