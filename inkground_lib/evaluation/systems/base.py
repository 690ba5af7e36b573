"""What every system shares: the item it answers, its raw output, the System protocol, errors."""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Protocol, runtime_checkable

import numpy as np

from inkground_lib.core.files import sha256_file, sha256_json
from inkground_lib.core.ink import Ink
from inkground_lib.core.secrets import scrub_secrets
from inkground_lib.evaluation.systems.errors import SystemConfigError, SystemUnavailable  # noqa: F401 (re-exported)

KINDS = ("api", "local", "replay", "specialist")


OUTPUT_STATUSES = ("ok", "truncated", "refusal", "empty", "too_large", "error", "interrupted", "not_sent")
"""What a request can end in: "ok", "truncated" (cut by the token limit), "refusal" (the model declined, by
the API's refusal signal or in plain words), "empty" (no content at all), "error" (no answer: transport
failure after retries, non-retryable HTTP error, local failure), "interrupted" (the user stopped the run
before the answer arrived), "too_large" (an answer over the size limit, ``max_answer_bytes``: its first bytes
are kept, it is never scored as an answer), "not_sent" (a spending cap, ``--max-requests`` / ``--max-cost``,
left it unsent: never written anywhere, not an error)."""


MODEL_OUTPUT_STATUSES = ("ok", "truncated", "refusal", "empty", "too_large")
"""What the prediction cache stores: answers the server gave (errors and interruptions go to the failures log
and are asked again on the next run)."""


RETRIED_ON_REQUEST = ("refusal", "empty", "too_large")
"""Cached answers asked again only when the user asks for it (``--retry-refusals``): a refusal, an empty
answer or one over the size limit may not recur, but asking again costs money."""


@dataclass
class Item:
    """One request: the word ``text`` (id ``word_id``) inside ``box`` = (x0, y0, x1, y1) page pixels on page
    ``page_id`` whose photo is ``page_image`` (a path; or ``image``, an (H, W, 3) uint8 RGB array) of size
    ``page_size`` = (W, H) pixels. ``reference`` is the reference ink (page pixels); ``request`` the
    :class:`inkground_lib.evaluation.prompt.PromptRequest` that API systems send."""

    word_id: str
    text: str
    box: tuple[float, float, float, float]
    page_id: str
    page_size: tuple[int, int]
    page_image: Optional[Path] = None
    reference: Optional[Ink] = None
    request: Any = None
    image: Optional[np.ndarray] = None

    @classmethod
    def from_word(cls, page, word, request=None) -> "Item":
        """An item from a :class:`~inkground_lib.core.dataset.Page` and one of its words."""
        return cls(word_id=word.id, text=word.text, box=tuple(float(v) for v in word.box), page_id=page.id,
                   page_size=(int(page.width), int(page.height)), page_image=Path(page.image),
                   reference=word.ink, request=request)

    def request_for(self, variant: str = "two-image", system: str = "?"):
        """The PromptRequest to send for prompt ``variant``. ``request`` is either a PromptRequest (its
        ``meta["variant"]``, when recorded, must be ``variant``) or a function ``variant -> PromptRequest``
        (see :meth:`with_prompt`), called at each use and not kept (a request holds megabytes of PNG; a
        run would otherwise hold every request in memory)."""
        req = self.request
        if req is None:
            raise SystemConfigError(f"system {system}: word {self.word_id}: the item carries no PromptRequest "
                                    f"(item.request); API systems need one")
        if callable(req) and not hasattr(req, "parts"):
            req = req(variant)  # built on demand and not kept: requests carry MBs of PNG
        got = (getattr(req, "meta", None) or {}).get("variant")
        if got is not None and got != variant:
            raise variant_mismatch(system, self.word_id, variant, got)
        return req

    @classmethod
    def with_prompt(cls, page, word, example, builder=None, **prompt_kwargs) -> "Item":
        """An item whose request is built on demand for the variant each system asks for, from parts shared by
        every item of ``builder`` (a :class:`inkground_lib.evaluation.prompt_parts.PromptBuilder`; default a new
        one with ``prompt_kwargs``: grid, max_side, font_size): the request of
        :func:`inkground_lib.evaluation.prompt.build_request`. ``example``: a prompt.Example."""
        if builder is None:
            from inkground_lib.evaluation.prompt_parts import PromptBuilder

            builder = PromptBuilder(**prompt_kwargs)
        return cls.from_word(page, word, request=builder.word(page, word, example,
                                                              functools.partial(read_rgb, str(page.image))))

    def word_key(self) -> str:
        """Which word of which dataset this item asks about, and what is asked: sha256 over the page photo's
        content (its file's sha256, or the array's bytes), the page and word ids, the word's text, its box and the
        page size. Recorded answers are matched to items by it (a replay file, a prediction cache), never by
        the word id alone: another dataset reusing the ids, or an edited word, has another key."""
        if self.page_image is not None:
            photo = file_sha(str(self.page_image))
        elif self.image is not None:
            photo = hashlib.sha256(np.ascontiguousarray(self.image).tobytes()).hexdigest()
        else:
            photo = None
        return sha256_json({"photo": photo, "page": self.page_id, "word": self.word_id, "text": self.text,
                            "box": [round(float(v), 3) for v in self.box], "size": list(self.page_size)})

    def load_image(self) -> np.ndarray:
        """The page photo as a uint8 (H, W, 3) RGB array."""
        if self.image is not None:
            return np.asarray(self.image)
        if self.page_image is None:
            raise SystemConfigError(f"word {self.word_id}: the item has neither a page image path nor an array")
        return read_rgb(str(self.page_image))


def variant_mismatch(system: str, word_id: str, variant: str, got: str) -> SystemConfigError:
    """The error of a system given a request of another prompt variant than it needs."""
    return SystemConfigError(f"system {system}: word {word_id}: the system needs a {variant!r} prompt but the "
                             f"item's request is {got!r}; build it with prompt.build_request(..., "
                             f"variant={variant!r}) or give Item.request as a function of the variant "
                             f"(Item.with_prompt)")


@functools.lru_cache(maxsize=2)
def read_rgb(path: str) -> np.ndarray:
    """The photo at ``path`` as a read-only uint8 (H, W, 3) RGB array (the last two are kept);
    SystemConfigError when it cannot be read."""
    from PIL import Image

    try:
        with Image.open(path) as im:
            a = np.asarray(im.convert("RGB"))
    except OSError as e:
        raise SystemConfigError(f"{path}: the page photo cannot be read ({e})") from None
    a.setflags(write=False)
    return a


def file_sha(path: str) -> str:
    """sha256 of the file at ``path``, computed once per version of the file (its size and modification time);
    "missing:<path>" for a file that is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return f"missing:{path}"
    return _file_sha(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _file_sha(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(path)


@dataclass
class RawOutput:
    """What a system answered for one item. ``text`` is a model's raw answer (API and replay systems);
    ``strokes`` an :class:`Ink` in page pixels (local systems); ``status`` one of OUTPUT_STATUSES (see module
    doc); ``finish_reason`` as the API reported it; ``usage`` the token counts; ``error`` a scrubbed message
    (never a key or base URL); ``attempts`` requests made (1 = no retry; 0 = none); ``latency`` seconds of
    the last attempt; ``served_model`` the model name the server reported; ``prompt_version`` that of the
    request sent (API systems); ``images_sent`` what was sent of each image (format, bytes, scale, size:
    :meth:`inkground_lib.evaluation.image_fit.SentImage.record`; API systems)."""

    text: Optional[str] = None
    strokes: Optional[Ink] = None
    status: str = "ok"
    finish_reason: Optional[str] = None
    usage: dict = field(default_factory=dict)
    error: Optional[str] = None
    attempts: int = 1
    latency: float = 0.0
    served_model: Optional[str] = None
    prompt_version: Optional[str] = None
    images_sent: list = field(default_factory=list)

    def __post_init__(self):
        if self.status not in OUTPUT_STATUSES:
            raise ValueError(f"RawOutput: status {self.status!r} is not one of {OUTPUT_STATUSES}")

    @property
    def is_model_output(self) -> bool:
        return self.status in MODEL_OUTPUT_STATUSES


@dataclass
class Prepared:
    """One item made ready to ask (:meth:`BaseSystem.prepare`): its request ``key`` (the cache key), the ``item``
    to ask with (an API system's holds its request's parts, built once), and for an API request the ``sizes``
    (W, H) of its images as sent, its ``text`` (system prompt and text parts), how many images are
    ``reencoded`` to fit the provider's limits and whether its images had to be ``encoded`` to know it."""

    key: str
    item: Item
    sizes: Optional[list] = None
    text: Optional[str] = None
    reencoded: int = 0
    encoded: bool = False


def prepare(system, item: Item) -> Prepared:
    """``system.prepare(item)``, or for a system without it (a user's own object) its ``request_key``."""
    own = getattr(system, "prepare", None)
    return own(item) if own is not None else Prepared(system.request_key(item), item)


@runtime_checkable
class System(Protocol):
    """What every system provides. ``request_key(item)`` is a hash of everything that changes the answer
    (the cache key); ``describe()`` a JSON-ready public description (no secret values)."""

    name: str
    kind: str
    label: str

    def predict(self, item: Item) -> RawOutput: ...

    def request_key(self, item: Item) -> str: ...

    def describe(self) -> dict: ...




class BaseSystem:
    adapter = "?"
    kind = "local"
    version = 1  # bump when a local system's output changes
    hashed_fields: tuple[str, ...] = ()
    default_concurrency = 1

    def __init__(self, name: str, cfg: dict):
        self.name = name
        self.cfg = dict(cfg)
        self.label = str(cfg.get("label") or name)
        self.reported_as = cfg.get("reported_as")
        self.model = cfg.get("model")
        self.concurrency = int(cfg.get("concurrency") or self.default_concurrency)

    def answer_params(self) -> dict:
        """Settings that change the answer (hashed into the request key)."""
        return {k: self.cfg.get(k) for k in self.hashed_fields}

    def prepare(self, item: Item) -> "Prepared":
        """What a run needs of ``item`` before asking: its key and the item to ask with (see :class:`Prepared`)."""
        return Prepared(self.request_key(item), item)

    def request_key(self, item: Item) -> str:
        base = {"adapter": self.adapter, "version": self.version, "params": self.answer_params(),
                "word": item.word_id, "page": item.page_id, "text": item.text,
                "box": [round(float(v), 3) for v in item.box], "size": list(item.page_size)}
        base.update(self._key_extra(item))
        return sha256_json(base)

    def _key_extra(self, item: Item) -> dict:
        return {}

    def describe(self) -> dict:
        return {"name": self.name, "adapter": self.adapter, "kind": self.kind, "label": self.label,
                "reported_as": self.reported_as, "model": self.model, "params": self.answer_params()}

    def scrub(self, text: str) -> str:
        return scrub_secrets(text, ())

    def interrupt(self) -> None:
        """Stop starting requests and retries (the user pressed Ctrl-C); answers in flight may still arrive."""
        self.stopping.set()

    def close(self) -> None:
        """Release the system's connections (API clients); nothing to do for local systems."""

    @functools.cached_property
    def stopping(self) -> threading.Event:
        return threading.Event()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} ({self.adapter})>"
