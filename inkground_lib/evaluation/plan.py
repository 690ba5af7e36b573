"""What a prediction run would send and cost, before anything is sent (``inkground predict --dry-run``), and
the spending cap that stops a run before it exceeds ``--max-requests`` / ``--max-cost``.

Estimates, never measurements: input tokens use each provider's documented image-token formula
(:mod:`inkground_lib.evaluation.cost`, cited there) over the images as they are sent (fitted to the provider's
limits) plus a text estimate; output tokens are bounded by ``max_tokens`` per request (reasoning included, as
providers bill it); cost uses the registry's prices (USD per million tokens) and is "-" where the registry has
none. :meth:`RunPlan.lines` says which inputs are exact and which are estimates, and on what each rests.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from typing import Optional, Sequence

from inkground_lib.evaluation.systems.base import RETRIED_ON_REQUEST, Item, System


@dataclass
class RequestEstimate:
    """One request: images sent, their sizes (W, H pixels), estimated input tokens (None: no formula) and
    the worst-case cost in USD (input + max_tokens output; None: no prices)."""

    images: int
    sizes: list
    input_tokens: Optional[int]
    worst_cost: Optional[float]
    reencoded: int = 0


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
        return [f"{self.system}: {self.items} words, {self.requests} distinct requests, {self.cached} cached, "
                f"{self.to_send} to send (nothing was sent: dry run)",
                f"  images per request: {imgs}; estimated input tokens: {tok} "
                f"(image formula: {self.formula or 'none in the registry'}, text ~4 characters per token)",
                f"  output tokens at most: {out} (max_tokens x requests, reasoning included)",
                f"  worst-case cost: {cost} (prices per million tokens: input {pin}, output {pout})",
                f"  exact: the requests to send (after the cache), their images and sizes as sent{refit}, "
                f"max_tokens; estimated: image tokens ({basis}), text tokens (~4 characters a token; tokenizers "
                f"differ), prices ({prices}); the bill is the usage each answer reports"]


def _png_size(data: bytes) -> tuple[int, int]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        return im.size


def estimate_request(system: System, item: Item) -> RequestEstimate:
    """The :class:`RequestEstimate` of the request ``system`` would send for ``item`` (API systems)."""
    from inkground_lib.evaluation.cost import image_tokens, text_tokens

    req = item.request_for(getattr(system, "variant", "two-image"), system.name)
    fitted = system.sent_images(req) if hasattr(system, "sent_images") else None
    sizes = ([tuple(im.size) for im in fitted] if fitted is not None
             else [_png_size(v) for k, v in req.parts if k == "image"])
    text = (req.system or "") + "".join(str(v) for k, v in req.parts if k == "text")
    formula = getattr(system, "image_token_formula", None)
    tokens = None
    if formula:
        tokens = int(text_tokens(text) + sum(image_tokens(formula, w, h) for w, h in sizes))
    pin, pout = getattr(system, "prices", (None, None))
    cost = None
    if tokens is not None and pin is not None and pout is not None:
        cost = (tokens * float(pin) + int(getattr(system, "max_tokens", 0)) * float(pout)) / 1e6
    return RequestEstimate(len(sizes), sizes, tokens, cost, sum(1 for im in fitted or [] if im.changed))


def plan_predictions(system: System, items: Sequence[Item], cache_path: str | os.PathLike,
                     retry_refusals: bool = False) -> RunPlan:
    """What :func:`inkground_lib.evaluation.cache.run_predictions` would send (after the cache) for ``items``,
    and its estimated size and cost. Reads the cache; sends and writes nothing."""
    from inkground_lib.evaluation.cache import load_cache

    keys = [system.request_key(it) for it in items]
    cached = load_cache(cache_path, system=system.name) if os.path.exists(cache_path) else {}
    todo: dict[str, Item] = {}
    for it, k in zip(items, keys):
        again = retry_refusals and k in cached and cached[k]["status"] in RETRIED_ON_REQUEST
        if (k not in cached or again) and k not in todo:
            todo[k] = it
    is_api = getattr(system, "kind", None) == "api"
    est = {k: estimate_request(system, it) for k, it in todo.items()} if is_api else {}
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
                   getattr(system, "image_token_formula", None), est, list(todo),
                   price_basis=getattr(system, "cfg", {}).get("price_basis"),
                   reencoded=sum(e.reencoded for e in est.values()))


class SpendingCapError(ValueError):
    """A cap that cannot be applied (e.g. --max-cost for a system without prices)."""


def within_caps(plan: RunPlan, max_requests: Optional[int] = None, max_cost: Optional[float] = None) -> set[str]:
    """The request keys (a prefix of ``plan.order``) that fit under ``max_requests`` and ``max_cost`` (USD,
    worst case per request; local systems cost nothing). SpendingCapError if ``max_cost`` is given for an API
    system without prices or image-token formula."""
    allowed, spent = set(), 0.0
    for n, k in enumerate(plan.order):
        if max_requests is not None and n >= int(max_requests):
            break
        if max_cost is not None and plan.estimates:
            e = plan.estimates.get(k)
            if e is None or e.worst_cost is None:
                raise SpendingCapError(f"system {plan.system}: --max-cost needs prices (price_input_per_mtok, "
                                       f"price_output_per_mtok) and image_token_formula in its registry entry")
            if spent + e.worst_cost > float(max_cost):
                break
            spent += e.worst_cost
        allowed.add(k)
    return allowed
