"""What a prediction run would send and cost, before anything is sent (``inkground predict --dry-run``: no key
needed, no image encoded), and the spending cap that stops a run before it exceeds ``--max-requests`` /
``--max-cost``.

Estimates, never measurements: input tokens use each provider's documented image-token formula
(:mod:`inkground_lib.evaluation.cost`, cited there) over the images as they are sent (fitted to the provider's
limits) plus a text estimate; output tokens are bounded by ``max_tokens`` per request (reasoning included, as
providers bill it); cost uses the registry's prices (USD per million tokens) and is "-" where the registry has
none. :meth:`RunPlan.lines` says which inputs are exact and which are estimates, and on what each rests.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional, Sequence

from inkground_lib.evaluation.systems.base import RETRIED_ON_REQUEST, Item, Prepared, System, prepare


@dataclass
class RequestEstimate:
    """One request: images sent, their sizes (W, H pixels), estimated input tokens (None: no formula) and
    the worst-case cost in USD (input + max_tokens output; None: no prices)."""

    images: int
    sizes: list
    input_tokens: Optional[int]
    worst_cost: Optional[float]
    reencoded: int = 0
    encoded: bool = False  # its images were PNG-encoded to learn whether they fit the provider's limits


@dataclass
class RunPlan:
    """What :func:`plan_predictions` found: items, distinct requests, already cached, to send; images per
    request (min, max); estimated input tokens and output bound of the requests to send; worst-case cost
    (None: no prices); and per request key the estimate (for the spending cap)."""

    system: str
    items: int
    requests: int
    cached: int
    to_send: int
    images_per_request: tuple
    input_tokens: Optional[int]
    output_bound: Optional[int]
    cost: Optional[float]
    prices: tuple
    formula: Optional[str]
    estimates: dict = field(default_factory=dict)
    order: list = field(default_factory=list)  # the keys to send, in the order a run sends them
    price_basis: Optional[str] = None  # what the registry's prices rest on (its price_basis field)
    reencoded: int = 0  # images re-encoded or downscaled to fit the provider's limits
    encoded: int = 0  # requests whose images were PNG-encoded to learn that (their size alone could not tell)

    def lines(self) -> list[str]:
        """The plan as printable lines."""
        lo, hi = self.images_per_request
        imgs = "-" if self.to_send == 0 else (f"{lo}" if lo == hi else f"{lo}-{hi}")
        tok = "-" if self.input_tokens is None else f"{self.input_tokens:,}"
        out = "-" if self.output_bound is None else f"{self.output_bound:,}"
        cost = "-" if self.cost is None else f"${self.cost:,.2f}"
        pin, pout = ("-" if p is None else f"${p:g}" for p in self.prices)
        from inkground_lib.evaluation.cost import FORMULA_BASIS

        basis = FORMULA_BASIS.get(self.formula or "", "no formula: no estimate")
        prices = ("no prices in the registry" if self.prices[0] is None else
                  f"from the registry, {self.price_basis or 'source not stated in the entry'}")
        refit = f", {self.reencoded} re-encoded to fit the provider's limits" if self.reencoded else ""
        how = ("sizes from the images' pixels, no image encoded" if not self.encoded else
               f"the images of {self.encoded} request(s) PNG-encoded to learn whether they fit the provider's "
               f"byte limits (their size alone could not tell), the others from their pixels")
        return [f"{self.system}: {self.items} words, {self.requests} distinct requests, {self.cached} cached, "
                f"{self.to_send} to send (nothing was sent: dry run)",
                f"  images per request: {imgs}; estimated input tokens: {tok} "
                f"(image formula: {self.formula or 'none in the registry'}, text ~4 characters per token)",
                f"  output tokens at most: {out} (max_tokens x requests, reasoning included)",
                f"  worst-case cost: {cost} (prices per million tokens: input {pin}, output {pout})",
                f"  exact: the requests to send (after the cache), their images and sizes as sent{refit} ({how}), "
                f"max_tokens; estimated: image tokens ({basis}), text tokens (~4 characters a token; tokenizers "
                f"differ), prices ({prices}); the bill is the usage each answer reports"]


def estimate_prepared(system: System, prepared: Prepared) -> RequestEstimate:
    """The :class:`RequestEstimate` of a request made ready to ask (:func:`~inkground_lib.evaluation.systems.base.
    prepare`: its images' sizes as sent and its text)."""
    from inkground_lib.evaluation.cost import image_tokens, text_tokens

    sizes = list(prepared.sizes or [])
    formula = getattr(system, "image_token_formula", None)
    tokens = None
    if formula:
        tokens = int(text_tokens(prepared.text or "") + sum(image_tokens(formula, int(w), int(h)) for w, h in sizes))
    pin, pout = getattr(system, "prices", (None, None))
    cost = None
    if tokens is not None and pin is not None and pout is not None:
        cost = (tokens * float(pin) + int(getattr(system, "max_tokens", 0)) * float(pout)) / 1e6
    return RequestEstimate(len(sizes), sizes, tokens, cost, prepared.reencoded, prepared.encoded)


def estimate_request(system: System, item: Item) -> RequestEstimate:
    """The :class:`RequestEstimate` of the request ``system`` would send for ``item`` (API systems)."""
    return estimate_prepared(system, prepare(system, item))


def plan_predictions(system: System, items: Sequence[Item], cache_path: str | os.PathLike,
                     retry_refusals: bool = False, progress: bool = False) -> RunPlan:
    """What :func:`inkground_lib.evaluation.asking.run_predictions` would send (after the cache, and the earlier
    runs' caches it would copy from) for ``items``, and its estimated size and cost. Reads the caches; sends and
    writes nothing, and encodes no image unless only encoding can tell whether it fits the provider's limits
    (:meth:`RunPlan.lines` says how many). ``progress``: a bar over the words."""
    from inkground_lib.core.progress import bar as progress_bar
    from inkground_lib.evaluation.cache import EarlierCaches, load_cache

    cached = load_cache(cache_path, system=system.name) if os.path.exists(cache_path) else {}
    earlier = EarlierCaches(cache_path, system.name)  # what a run would copy from the earlier runs' caches
    is_api = getattr(system, "kind", None) == "api"
    keys, todo, est = [], [], {}
    for it in progress_bar(items, desc=f"plan {system.name}", unit="word", enabled=progress):
        p = prepare(system, it)
        k = p.key
        keys.append(k)
        rec = cached.get(k) or earlier.get(k)
        again = retry_refusals and rec is not None and rec["status"] in RETRIED_ON_REQUEST
        if (rec is None or again) and k not in est:
            todo.append(k)
            est[k] = estimate_prepared(system, p) if is_api else None
    est = est if is_api else {}
    n_img = [e.images for e in est.values()] or [0]
    tokens = None
    if est and all(e.input_tokens is not None for e in est.values()):
        tokens = sum(e.input_tokens for e in est.values())
    cost = None
    if est and all(e.worst_cost is not None for e in est.values()):
        cost = sum(e.worst_cost for e in est.values())
    return RunPlan(system.name, len(items), len(set(keys)), len(set(keys)) - len(todo), len(todo),
                   (min(n_img), max(n_img)), tokens if is_api else 0,
                   int(getattr(system, "max_tokens", 0)) * len(todo) if is_api else 0,
                   cost if is_api else 0.0, tuple(getattr(system, "prices", (None, None))),
                   getattr(system, "image_token_formula", None), est, todo,
                   price_basis=getattr(system, "cfg", {}).get("price_basis"),
                   reencoded=sum(e.reencoded for e in est.values()),
                   encoded=sum(1 for e in est.values() if e.encoded))


class SpendingCapError(ValueError):
    """A cap that cannot be applied (e.g. --max-cost for a system without prices)."""


COST_FIELDS = ("price_input_per_mtok", "price_output_per_mtok", "image_token_formula")
"""The registry fields ``--max-cost`` needs of an API system: its prices and its image-token rule."""


class SpendingCap:
    """``--max-requests`` / ``--max-cost`` (USD, worst case per request: :class:`RequestEstimate`; local systems
    cost nothing) over the requests of a run, in the order they would be sent: :meth:`admit` says yes until a
    request would pass a cap, then no to it and to every later one (:attr:`closed`). SpendingCapError at once if
    ``max_cost`` is given for an API system without prices or image-token rule (:data:`COST_FIELDS`)."""

    def __init__(self, system: System, max_requests: Optional[int] = None, max_cost: Optional[float] = None):
        self.max_requests = None if max_requests is None else int(max_requests)
        self.max_cost = None if max_cost is None else float(max_cost)
        if self.max_cost is not None and getattr(system, "kind", None) == "api":
            cfg = getattr(system, "cfg", {})
            missing = [f for f in COST_FIELDS if cfg.get(f) is None]
            if missing:
                raise SpendingCapError(f"system {getattr(system, 'name', '?')}: --max-cost needs "
                                       f"{', '.join(COST_FIELDS[:-1])} and {COST_FIELDS[-1]} in the registry entry "
                                       f"(missing: {', '.join(missing)})")
        self.sent, self.spent, self.closed = 0, 0.0, False

    def admit(self, system: System, prepared: Prepared) -> bool:
        """True when the request ``prepared`` fits under the caps (and is counted); False from the first that
        does not on."""
        if self.closed:
            return False
        cost = 0.0
        if self.max_cost is not None and getattr(system, "kind", None) == "api":
            cost = estimate_prepared(system, prepared).worst_cost
        if (self.max_requests is not None and self.sent >= self.max_requests) or \
                (self.max_cost is not None and self.spent + cost > self.max_cost):
            self.closed = True
            return False
        self.sent += 1
        self.spent += cost
        return True
