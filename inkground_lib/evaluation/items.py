"""What section 03 asks and scores for each word of a dataset: which words are targets, its request item (with
the prompt's in-context examples), the ink it is scored against, and the ink of a prediction record."""

from __future__ import annotations

import dataclasses

from inkground_lib.components.targets import TARGET_RULE, target_mask
from inkground_lib.core.dataset import DatasetError
from inkground_lib.core.defaults import GRID
from inkground_lib.core.ink import InkError, ink_from_lists
from inkground_lib.evaluation.parse import parse_strokes
from inkground_lib.evaluation.prompt import example_from_page
from inkground_lib.evaluation.prompt_parts import PromptBuilder
from inkground_lib.evaluation.systems.base import Item


NON_TARGETS = "section03_non_targets"
"""The key of a :func:`target_dataset`'s ``meta`` holding how many words it left out."""


def target_dataset(ds):
    """``ds`` with only its target words (:func:`inkground_lib.components.targets.target_mask`, page by page:
    :data:`~inkground_lib.components.targets.TARGET_RULE`), what section 03 asks and scores on every dataset;
    ``meta[NON_TARGETS]`` says how many words were left out. Pages keep their order (a page may be left with
    no word); the dataset on disk is not changed. Applying it twice changes nothing."""
    if NON_TARGETS in ds.meta:
        return ds
    pages, left_out = [], 0
    for p in ds.pages:
        mask = target_mask([w.text for w in p.words])
        left_out += mask.count(False)
        pages.append(dataclasses.replace(p, words=[w for w, keep in zip(p.words, mask) if keep]))
    return dataclasses.replace(ds, pages=pages, meta={**ds.meta, NON_TARGETS: left_out})


def target_facts(ds) -> dict:
    """What the target rule did to a :func:`target_dataset`: the rule, the words section 03 left out, and (a
    benchmark set) the words the benchmark builder left out before."""
    return {"rule": TARGET_RULE, "left_out": int(ds.meta.get(NON_TARGETS, 0)),
            "left_out_by_builder": ds.meta.get("non_target_words")}


def need_words(ds, what: str = "predict") -> None:
    """DatasetError naming the dataset when a :func:`target_dataset` has no word to ask (no pages, no words, or
    no target word), so a command never reports "0 words" as a success."""
    if ds.n_words:
        return
    n_pages = len(ds.pages)
    why = ("it has no pages" if not n_pages else
           f"its {n_pages} page{'s' if n_pages != 1 else ''} hold no target word ({ds.meta.get(NON_TARGETS, 0)} "
           f"word(s) left out because their text occurs more than once on their page)" if ds.meta.get(NON_TARGETS)
           else f"its {n_pages} page{'s' if n_pages != 1 else ''} hold no words")
    raise DatasetError(f"{ds.root}: nothing to {what}: {why}")


def choose_examples(ds):
    """The in-context examples: the longest word (by letters) of the first page with at least 3 words, and
    of the next such page; a word on the first example's page gets the second example, so no model sees
    its own page as the example. Returns (example_a, example_b)."""
    picks = []
    for page in ds.pages:
        if len(page.words) >= 3:
            w = max(page.words, key=lambda w: (sum(c.isalpha() for c in w.text), w.id))
            picks.append(example_from_page(page, w))
        if len(picks) == 2:
            return picks[0], picks[1]
    raise ValueError(f"{ds.root}: at least two pages with 3 or more words are needed to choose the prompt's "
                     f"in-context examples")


def make_items(ds, with_prompt: bool, grid: int = GRID) -> list:
    """One systems.Item per word of ``ds`` in dataset order. With ``with_prompt`` (API systems) each carries its
    request, built on demand from parts every item shares (:class:`~inkground_lib.evaluation.prompt_parts.
    PromptBuilder`: each page's grid image made once, the examples' once)."""
    if not with_prompt:
        return [Item.from_word(p, w) for p in ds.pages for w in p.words]
    ex_a, ex_b = choose_examples(ds)
    builder = PromptBuilder(grid=grid)
    return [Item.with_prompt(p, w, ex_b if p.id == ex_a.page_id else ex_a, builder=builder)
            for p in ds.pages for w in p.words]


def record_ink(record: dict, page_size, grid: int = GRID):
    """(ink or None, status) of one prediction record: local systems' strokes as they are; model text
    through :func:`inkground_lib.evaluation.parse.parse_strokes` (usable: ok, partial, truncated)."""
    status = record.get("status", "error")
    if status in ("error", "too_large", "interrupted", "not_sent"):  # no answer, or one cut at the size limit
        return None, status
    if record.get("strokes") is not None:
        try:
            ink = ink_from_lists(record["strokes"], f"prediction {record.get('word_id')}")
        except InkError:
            return None, "invalid"
        return (ink, "ok") if ink.n_points else (None, "no_strokes")
    res = parse_strokes(record.get("raw_text") or "", grid=grid, page_size=tuple(page_size))
    if res.status in ("ok", "partial", "truncated") and res.n_points:
        return res.to_ink(), res.status
    return None, (status if status in ("refusal", "empty") and res.status == "unparseable" else res.status)


def reference_inks(ds, reference: str = "reference"):
    """The inks each word is scored against: ``word.ink`` or, with "true", ``word.true_ink`` (an error
    naming the word when a dataset has no true ink for it)."""
    for p in ds.pages:
        for w in p.words:
            if reference == "true":
                if w.true_ink is None:
                    raise ValueError(f"{ds.root}: word {w.id} has no true ink; score against reference='reference'")
                yield w.true_ink
            else:
                yield w.ink
