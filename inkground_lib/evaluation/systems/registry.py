"""The systems registry: one table of adapters, each with its card; the YAML entries; building a system by name.

Standard library only at import (``make clean`` reads the adapters' cards): an adapter's module is imported when a
system of it is built."""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from inkground_lib.components.derenderers.factory import DERENDERERS
from inkground_lib.core.registry import Card, lookup
from inkground_lib.core.secrets import ENV_NAME, public_url_problem
from inkground_lib.evaluation.systems.errors import SystemConfigError

if TYPE_CHECKING:
    from inkground_lib.evaluation.systems.base import System
    from inkground_lib.evaluation.systems.retry import RetryPolicy

REGISTRY_FILE = Path(__file__).with_name("systems.yaml")


ENV_EXTRA = "INKGROUND_SYSTEMS"


_COMMON = {"adapter", "label", "reported_as", "notes", "concurrency", "extends"}


API_FIELDS = {"model", "api_key_env", "base_url_env", "default_base_url", "max_tokens", "temperature", "top_p", "top_k",
        "timeout", "max_attempts", "backoff_base", "backoff_max", "variant", "extra_body", "key_optional", "rpm",
        "rpd", "price_input_per_mtok", "price_output_per_mtok", "price_basis", "sampling", "image_token_formula",
        "provider", "system_message", "max_answer_bytes", "max_deadline_failures"}
"""The fields every provider adapter's entries may carry (an :class:`Adapter` of kind "api" adds its own)."""


@dataclass(frozen=True)
class Adapter:
    """One adapter family: how to build a system from its registry entry, its kind, the fields its entries may
    carry (besides the common ones) and its card (the book's sentence, whether its predictions are free to make
    again; a derenderer's label, which the entry named after it takes when it gives none)."""

    build: Callable[..., "System"]  # (name, cfg, retry, **options) -> System (API adapters: offline=)
    kind: str
    fields: frozenset
    card: Card = field(default_factory=lambda: Card(sections=("03",)))


def _api(cls: str):
    """A builder for a provider adapter of :mod:`~inkground_lib.evaluation.systems.api` (imported when built)."""
    def build(name, cfg, retry, **options):
        from inkground_lib.evaluation.systems import api

        return getattr(api, cls)(name, cfg, retry=retry, **options)
    return build


def _replay(name, cfg, retry):
    from inkground_lib.evaluation.systems.replay import ReplaySystem

    return ReplaySystem(name, cfg)


def _local(factory: str):
    """A builder for a local system of :mod:`~inkground_lib.evaluation.systems.local`, imported when one is built
    (it imports the derenderers, scipy and the tracer: seconds that an API run or a dry run need not wait)."""
    def build(name, cfg, retry):
        from inkground_lib.evaluation.systems import local

        return getattr(local, factory)(name, cfg)
    return build


def _derender(adapter: str):
    """A builder for the section-03 system of the derenderer ``adapter`` (a row of
    :data:`~inkground_lib.components.derenderers.factory.DERENDERERS`)."""
    def build(name, cfg, retry):
        from inkground_lib.evaluation.systems import local

        return local.build_derenderer(adapter, name, cfg)
    return build


_API_CARD = Card(sections=("03",))
"""A provider adapter's card: its systems' answers cost money and time, so ``make clean`` keeps them."""

ADAPTERS: dict[str, Adapter] = {
    "openai": Adapter(_api("OpenAISystem"), "api", frozenset(API_FIELDS | {"max_tokens_param"}), _API_CARD),
    "anthropic": Adapter(_api("AnthropicSystem"), "api", frozenset(API_FIELDS | {"api_version"}), _API_CARD),
    "reference": Adapter(_local("ReferenceSystem"), "local", frozenset(), Card(
        free=True, sections=("03",),
        text="the reference ink is a sanity check (it is the reference, so it scores 0 against it)")),
    "font": Adapter(_local("FontSystem"), "local", frozenset({"font"}), Card(
        free=True, sections=("03",),
        text="the font baseline writes the right word in the right box in a typeface: readable, but in no one's "
             "hand")),
    "box": Adapter(_local("BoxSystem"), "local", frozenset({"shape"}), Card(
        free=True, sections=("03",),
        text="the box baseline knows where the word is but not what it says")),
    "replay": Adapter(_replay, "replay", frozenset({"path", "path_env", "source", "model"}), Card(
        free=True, sections=("03",))),
}
"""Adapter name -> :class:`Adapter`: the adapter families of their own (a provider's protocol, the baselines, the
replay). A new adapter family is one class plus one line here; a provider protocol is an adapter of kind ``"api"``
(an :class:`~inkground_lib.evaluation.systems.api.ApiSystem` subclass), whose entries the provider table
(``providers.yaml``) and ``inkground check`` read through :func:`provider_adapters`. A derenderer is not listed
here: each derenderer whose card serves section 03 is an adapter of kind ``"specialist"`` (:func:`adapters`)."""


def adapters() -> dict[str, Adapter]:
    """Every adapter family: :data:`ADAPTERS`, then one adapter of kind ``"specialist"`` per derenderer whose card
    serves section 03 (:data:`~inkground_lib.components.derenderers.factory.DERENDERERS`: its builder, its card,
    the fields ``grow`` and its ``system_fields``), under the derenderer's name.

    >>> [n for n, a in adapters().items() if a.kind == "specialist"]
    ['skeleton', 'tracer', 'inksight']
    """
    derived = {n: Adapter(_derender(n), "specialist", frozenset({"grow"}) | d.system_fields, d.card)
               for n, d in DERENDERERS.items() if "03" in d.card.sections}
    return {**ADAPTERS, **derived}


def provider_adapters() -> tuple[str, ...]:
    """The adapters that speak a provider's protocol (kind ``"api"``), in :data:`ADAPTERS` order: their entries
    name a ``provider`` of ``providers.yaml`` (or take their adapter's default), and ``inkground check`` tests
    them against its rules and asks their endpoint. The one list of them: nothing else names these adapters.

    >>> provider_adapters()
    ('openai', 'anthropic')
    """
    return tuple(name for name, a in ADAPTERS.items() if a.kind == "api")


def free_adapters() -> frozenset:
    """The adapters whose predictions cost nothing to make again (their card says ``free``): ``make clean``
    removes their prediction caches and keeps every other's."""
    return frozenset(n for n, a in adapters().items() if a.card.free)


_LITERAL_SECRETS = {"api_key": "api_key_env", "key": "api_key_env", "base_url": "base_url_env",
                    "token": "api_key_env", "url": "base_url_env"}


def validate_entry(name: str, cfg, where: str = "registry") -> dict:
    """Check one registry entry; raise SystemConfigError naming the file, the entry and the field."""
    w = f"{where}: system {name}"
    if not isinstance(name, str) or not name:
        raise SystemConfigError(f"{where}: system names must be non-empty strings, got {name!r}")
    from inkground_lib.core.dataset import check_id

    check_id(name, f"{where}: system name (it names the cache file)", SystemConfigError)
    if not isinstance(cfg, dict):
        raise SystemConfigError(f"{w}: expected a mapping of fields, got {type(cfg).__name__}")
    for k in cfg:
        if k in _LITERAL_SECRETS:
            raise SystemConfigError(f"{w}: field {k}: secrets and private URLs may not be written in a config "
                                    f"file; name the environment variable in {_LITERAL_SECRETS[k]} instead")
    adapter, families = cfg.get("adapter"), adapters()
    if not isinstance(adapter, str) or adapter not in families:
        raise SystemConfigError(f"{w}: field adapter: {adapter!r} is not one of {sorted(families)}")
    unknown = set(cfg) - _COMMON - families[adapter].fields
    if unknown:
        raise SystemConfigError(f"{w}: unknown field(s) {sorted(unknown)} for adapter {adapter} (allowed: "
                                f"{sorted(_COMMON | families[adapter].fields)})")
    for k in ("api_key_env", "base_url_env", "path_env", "model_dir_env"):
        v = cfg.get(k)
        if v is not None and not (isinstance(v, str) and ENV_NAME.match(v)):
            raise SystemConfigError(f"{w}: field {k}: {v!r} is not an environment variable name")
    for k in ("max_tokens", "concurrency", "max_attempts", "rpm", "rpd", "max_answer_bytes", "max_deadline_failures"):
        v = cfg.get(k)
        if v is not None and not (isinstance(v, int) and not isinstance(v, bool) and v > 0):
            raise SystemConfigError(f"{w}: field {k}: expected a positive integer, got {v!r}")
    for k in ("temperature", "top_p", "top_k", "timeout", "backoff_base", "backoff_max", "grow",
              "price_input_per_mtok", "price_output_per_mtok"):
        v = cfg.get(k)
        if v is not None and not (isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0):
            raise SystemConfigError(f"{w}: field {k}: expected a non-negative number, got {v!r}")
    if cfg.get("variant") not in (None, "two-image", "one-image"):
        raise SystemConfigError(f"{w}: field variant: must be two-image (default) or one-image, got "
                                f"{cfg.get('variant')!r}")
    if isinstance(cfg.get("api_version"), _dt.date):  # YAML reads an unquoted 2023-06-01 as a date
        cfg = {**cfg, "api_version": cfg["api_version"].isoformat()}
    for k in ("sampling", "image_token_formula", "notes", "provider", "api_version", "price_basis"):
        if cfg.get(k) is not None and not isinstance(cfg[k], str):
            raise SystemConfigError(f"{w}: field {k}: expected a text")
    for k in ("key_optional", "system_message"):
        if cfg.get(k) not in (None, True, False):
            raise SystemConfigError(f"{w}: field {k}: expected true or false")
    if cfg.get("extra_body") is not None and not isinstance(cfg["extra_body"], dict):
        raise SystemConfigError(f"{w}: field extra_body: expected a mapping")
    dbu = cfg.get("default_base_url")
    bad = public_url_problem(dbu) if isinstance(dbu, str) else "not a text"
    if dbu is not None and bad:
        raise SystemConfigError(f"{w}: field default_base_url: must be a public https:// URL ({bad}; private URLs "
                                f"come from base_url_env)")
    label = families[adapter].card.label  # the adapter's own entry (of its name) takes its card's label
    return dict(cfg) if "label" in cfg or name != adapter or not label else {**cfg, "label": label}


def _read_yaml(path: Path) -> dict:
    import yaml

    if not path.is_file():
        raise SystemConfigError(f"{path}: systems registry file does not exist")
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except yaml.YAMLError as e:
        raise SystemConfigError(f"{path}: not valid YAML ({e})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SystemConfigError(f"{path}: expected a mapping of system name -> fields")
    return data


def load_registry(extra: str | os.PathLike | Sequence | None = None, use_env: bool = True) -> dict[str, dict]:
    """All system entries: the packaged ``systems.yaml``, then each file named by ``INKGROUND_SYSTEMS``
    (``os.pathsep``-separated; when ``use_env``), then ``extra`` (a path or a list of paths). Later entries
    replace earlier ones of the same name; an entry with ``extends: <name>`` is merged onto that entry. A
    derenderer adapter with no packaged entry gets one of its name (:func:`adapters`), after the packaged ones.
    Every entry is validated."""
    files = []
    if use_env and os.environ.get(ENV_EXTRA):
        files += [Path(p) for p in os.environ[ENV_EXTRA].split(os.pathsep) if p]
    if extra is not None:
        files += [Path(extra)] if isinstance(extra, (str, os.PathLike)) else [Path(p) for p in extra]
    reg: dict[str, dict] = {}
    _merge(reg, REGISTRY_FILE)
    for name, a in adapters().items():  # a derenderer serving section 03 runs by its name with no line of YAML
        if a.kind == "specialist" and name not in reg:
            reg[name] = validate_entry(name, {"adapter": name}, "derenderer card")
    for path in files:
        _merge(reg, path)
    return reg


def _merge(reg: dict, path: Path) -> None:
    """The entries of the YAML file ``path`` into ``reg``, validated (see :func:`load_registry`)."""
    for name, cfg in _read_yaml(Path(path)).items():
        name = str(name)
        if isinstance(cfg, dict) and cfg.get("extends") is not None:
            base = cfg["extends"]
            if base not in reg:
                raise SystemConfigError(f"{path}: system {name}: field extends: no system {base!r} defined "
                                        f"before it")
            own = {k: v for k, v in cfg.items() if k != "extends"}
            # a derived entry is not the paper's system: its label is its own name unless given, and it
            # is reported as nothing unless it says so
            cfg = {**reg[base], "label": name, "reported_as": None, **own}
        reg[name] = validate_entry(name, cfg, str(path))


def list_systems(registry: Optional[dict] = None) -> list[str]:
    return list((registry or load_registry()).keys())


def system_kind(name: str, registry: Optional[dict] = None) -> str:
    """The kind of the system ``name``'s adapter; UnknownComponent naming the systems when there is none."""
    reg = registry or load_registry()
    return adapters()[lookup(reg, name, "system")["adapter"]].kind


def make_system(name: str, registry: Optional[dict] = None, extra=None, retry: Optional["RetryPolicy"] = None,
                offline: bool = False, **overrides) -> "System":
    """Build the system ``name`` from the registry (``load_registry(extra)`` unless ``registry`` is given),
    with ``overrides`` (registry fields, e.g. ``path=`` for replay, ``concurrency=``) merged on top; an unknown
    name raises :class:`~inkground_lib.core.registry.UnknownComponent` naming the systems.
    API systems read their key and base URL from the environment now: a missing variable raises
    SystemConfigError naming it; ``offline`` (to plan a run, ``predict --dry-run``) builds them without either,
    unable to send. ``retry`` replaces the retry policy (tests inject ``sleep``)."""
    reg = registry if registry is not None else load_registry(extra)
    cfg = validate_entry(name, {**lookup(reg, name, "system"), **overrides}, "registry + overrides")
    family = adapters()[cfg["adapter"]]
    return family.build(name, cfg, retry, **({"offline": True} if offline and family.kind == "api" else {}))
