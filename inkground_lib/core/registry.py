"""The one pattern of the component registries (derenderers, OCR engines, system adapters): a table of rows, each
with its :class:`Card`; :func:`lookup` by name; :class:`UnknownComponent` for a name no row has.

A card holds what the book, the tables and the commands say about one component, written once beside its row:
its label, the book's sentence about it, a few words of gloss, its cost class (``make clean`` keeps the logs and
predictions of a component that is not ``free``), what it stands in for, and the sections it serves. Standard
library only: ``make clean`` reads the cards with the system Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping
from typing import Callable, Iterable, TypeVar

SECTIONS = ("02", "03")
"""The sections a component can serve: 02 (pseudo-labels: derender, OCR filter), 03 (a system, the OCR of renders)."""

T = TypeVar("T")


@dataclass(frozen=True)
class Card:
    """What is said about one component, once: ``label`` (how tables name it), ``text`` (the book's sentence: its
    name and what it is, in words), ``gloss`` (a few words shown in brackets after its name), ``free`` (it runs
    here quickly and for free: ``make clean`` removes its logs and predictions; a card that does not say so keeps
    them), ``stands_in``
    (the paper's component it stands in for offline, "" for none), ``sections`` (:data:`SECTIONS` it serves; a
    derenderer serving "03" is a section-03 system adapter too)."""

    label: str = ""
    text: str = ""
    gloss: str = ""
    free: bool = False
    stands_in: str = ""
    sections: tuple = SECTIONS

    def __post_init__(self):
        bad = [s for s in self.sections if s not in SECTIONS]
        if bad:
            raise ValueError(f"card: sections {bad} are not among {SECTIONS}")


class UnknownComponent(ValueError):
    """A name that no row of a registry has: names ``what`` was looked up and the names known (``choices``)."""

    def __init__(self, what: str, name, choices: Iterable[str]):
        self.what, self.name, self.choices = what, name, tuple(choices)
        super().__init__(f"unknown {what} {name!r}; known: {', '.join(self.choices)}")


def lookup(table: Mapping[str, T], name, what: str, choices: Iterable[str] | None = None) -> T:
    """The row ``name`` of ``table``; :class:`UnknownComponent` naming ``what`` and the names known (``choices``,
    default the table's names) when there is none.

    >>> lookup({"a": 1}, "a", "thing")
    1
    >>> lookup({"a": 1}, "b", "thing")
    Traceback (most recent call last):
    ...
    inkground_lib.core.registry.UnknownComponent: unknown thing 'b'; known: a
    """
    try:
        return table[name]
    except (KeyError, TypeError):
        raise UnknownComponent(what, name, table if choices is None else choices) from None



class LiveMapping(Mapping):
    """A read-only mapping that ``make()`` computes again at each look-up: a view of a registry's cards in which a
    row added to the table (a test's toy component) is present at once."""

    def __init__(self, make: Callable[[], dict]):
        self._make = make

    def __getitem__(self, name):
        return self._make()[name]

    def __iter__(self):
        return iter(self._make())

    def __len__(self):
        return len(self._make())

    def __repr__(self):
        return f"LiveMapping({self._make()!r})"


def card_view(table: Mapping, field: str, keep: Callable = lambda row: True) -> LiveMapping:
    """Name -> the card's ``field``, for the rows of ``table`` (each with a ``card``) that ``keep(row)`` and whose
    field is not empty, read at each look-up (:class:`LiveMapping`).

    >>> from types import SimpleNamespace as Row
    >>> table = {"a": Row(card=Card(text="A")), "b": Row(card=Card())}
    >>> v = card_view(table, "text")
    >>> dict(v), "b" in v
    ({'a': 'A'}, False)
    >>> table["c"] = Row(card=Card(text="C")); v["c"]
    'C'
    """
    return LiveMapping(lambda: {n: getattr(r.card, field) for n, r in list(table.items())
                                if keep(r) and getattr(r.card, field)})
