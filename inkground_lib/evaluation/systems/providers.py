"""What each provider accepts: the sampling rules, image limits and quota errors of ``providers.yaml``.

A registry entry names its ``provider``; :func:`sampling_for` resolves what the entry sends (the provider's
defaults, the entry's own settings, ``null`` = not sent) and :func:`rule_problems` lists the rules it breaks,
so ``inkground check`` and building a system refuse a setting the provider rejects before any request. The
rules are data (each with its source), never special cases in the adapters.
"""

from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from inkground_lib.evaluation.systems.base import SystemConfigError

PROVIDERS_FILE = Path(__file__).with_name("providers.yaml")

SAMPLING_FIELDS = ("temperature", "top_p", "top_k")
"""The sampling settings an entry may carry (each sent only where its provider accepts it)."""


RULE_KINDS = ("refuse", "only", "range", "exclusive", "advise")

UNSET = object()
"""An entry's sampling field that is absent (the provider's default applies), unlike ``None`` (not sent)."""


@dataclass(frozen=True)
class Rule:
    """One provider rule (see providers.yaml): applies to ``api_version`` (None: any) and to model ids matching
    one of ``models`` (empty: any); ``kind`` in :data:`RULE_KINDS` with its ``value``."""

    id: str
    kind: str
    value: object
    source: str
    api_version: Optional[str] = None
    models: tuple = ()

    def applies(self, model: str, api_version: Optional[str]) -> bool:
        if self.api_version is not None and api_version != self.api_version:
            return False
        return not self.models or any(fnmatch.fnmatchcase(model, p) for p in self.models)

    def problem(self, sent: dict) -> Optional[str]:
        """Why ``sent`` (sampling field -> value, only the fields sent) breaks this rule, or None."""
        if self.kind == "refuse":
            bad = [f for f in self.value if f in sent]
            return f"refuses {', '.join(bad)} (any value)" if bad else None
        if self.kind == "only":
            for f, allowed in self.value.items():
                if f in sent and sent[f] not in allowed:
                    return f"accepts {f} only as {' or '.join(map(str, dict.fromkeys(allowed)))}, got {sent[f]!r}"
            return None
        if self.kind == "range":
            for f, (lo, hi) in self.value.items():
                if f in sent and not (lo <= sent[f] <= hi):
                    return f"accepts {f} from {lo} to {hi}, got {sent[f]!r}"
            return None
        if self.kind == "exclusive":
            both = [f for f in self.value if f in sent]
            return f"refuses {' and '.join(both)} together" if len(both) > 1 else None
        return None

    def advice(self, sent: dict) -> Optional[str]:
        if self.kind != "advise":
            return None
        for f, advised in self.value.items():
            if f in sent and sent[f] not in advised:
                return f"advises {f} = {advised[0]}, got {sent[f]!r}"
        return None


@dataclass(frozen=True)
class ImageLimits:
    """A provider's image limits (None: none known): ``max_image_b64_bytes`` per image as sent (base64 text),
    ``max_side`` pixels per side, ``max_pixels`` per image, ``max_images`` per request, ``max_request_bytes``
    of all images of one request (base64)."""

    max_image_b64_bytes: Optional[int] = None
    max_side: Optional[int] = None
    max_pixels: Optional[int] = None
    max_images: Optional[int] = None
    max_request_bytes: Optional[int] = None
    source: str = ""

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.max_image_b64_bytes, self.max_side, self.max_pixels,
                                           self.max_images, self.max_request_bytes))


@dataclass(frozen=True)
class Provider:
    name: str
    adapter: str
    defaults: dict
    rules: tuple
    images: ImageLimits
    quota_errors: tuple
    api_versions: tuple = ()
    default: bool = False  # the provider of an entry of this adapter that names none

    @property
    def api_version(self) -> Optional[str]:
        """The API version sent when an entry names none (the pinned SDK's, for Anthropic)."""
        return self.api_versions[0] if self.api_versions else None


def _need(cond: bool, where: str, msg: str) -> None:
    if not cond:
        raise SystemConfigError(f"{where}: {msg}")


def _rule(name: str, raw, i: int) -> Rule:
    where = f"{PROVIDERS_FILE.name}: provider {name}: rules[{i}]"
    _need(isinstance(raw, dict), where, "expected a mapping")
    kinds = [k for k in RULE_KINDS if k in raw]
    _need(len(kinds) == 1, where, f"needs exactly one of {RULE_KINDS}")
    _need(isinstance(raw.get("id"), str) and isinstance(raw.get("source"), str) and raw["source"].strip(),
          where, "needs an id and a source")
    unknown = set(raw) - {"id", "source", "api_version", "models", *RULE_KINDS}
    _need(not unknown, where, f"unknown field(s) {sorted(unknown)}")
    kind = kinds[0]
    value = raw[kind]
    if kind in ("refuse", "exclusive"):
        _need(isinstance(value, list) and set(value) <= set(SAMPLING_FIELDS), where,
              f"{kind}: expected a list of {SAMPLING_FIELDS}")
        value = tuple(value)
    else:
        _need(isinstance(value, dict) and set(value) <= set(SAMPLING_FIELDS), where,
              f"{kind}: expected a mapping of {SAMPLING_FIELDS}")
        value = {k: tuple(v) for k, v in value.items()}
        if kind == "range":
            _need(all(len(v) == 2 for v in value.values()), where, "range: expected [lo, hi]")
    models = raw.get("models") or []
    _need(isinstance(models, list) and all(isinstance(m, str) for m in models), where, "models: expected a list")
    return Rule(raw["id"], kind, value, raw["source"], raw.get("api_version"), tuple(models))


@functools.lru_cache(maxsize=1)
def load_providers() -> dict[str, Provider]:
    """Every provider of ``providers.yaml`` (validated; read once per process). Which adapters exist is the
    systems registry's business (:func:`~inkground_lib.evaluation.systems.registry.provider_adapters`): an entry
    names one, and :func:`provider_of` refuses a provider spoken to by another adapter than the entry's."""
    import yaml

    data = yaml.safe_load(PROVIDERS_FILE.read_text("utf-8"))
    out = {}
    defaults_of: dict[str, str] = {}
    for name, raw in data.items():
        where = f"{PROVIDERS_FILE.name}: provider {name}"
        _need(isinstance(raw, dict) and isinstance(raw.get("adapter"), str) and raw["adapter"], where,
              "adapter: the name of the adapter that speaks to it (registry.ADAPTERS)")
        unknown = set(raw) - {"adapter", "default", "defaults", "rules", "images", "quota_errors", "api_versions"}
        _need(not unknown, where, f"unknown field(s) {sorted(unknown)}")
        _need(raw.get("default") in (None, True, False), where, "default: true or false")
        if raw.get("default"):
            _need(raw["adapter"] not in defaults_of, where, f"adapter {raw['adapter']} already has its default "
                                                            f"provider, {defaults_of.get(raw['adapter'])}")
            defaults_of[raw["adapter"]] = str(name)
        rules = tuple(_rule(name, r, i) for i, r in enumerate(raw.get("rules") or []))
        images = dict(raw.get("images") or {})
        limits = ImageLimits(**images)
        defaults = dict(raw.get("defaults") or {})
        _need(set(defaults) <= set(SAMPLING_FIELDS), where, f"defaults: only {SAMPLING_FIELDS}")
        out[str(name)] = Provider(str(name), raw["adapter"], defaults, rules, limits,
                                  tuple(str(q) for q in raw.get("quota_errors") or []),
                                  tuple(str(v) for v in raw.get("api_versions") or []), bool(raw.get("default")))
    ids = [r.id for p in out.values() for r in p.rules]
    _need(len(ids) == len(set(ids)), PROVIDERS_FILE.name, "rule ids must be unique")
    return out


def default_provider(adapter: str) -> Optional[str]:
    """The provider of ``providers.yaml`` an entry of ``adapter`` speaks to when it names none (the one marked
    ``default: true``), or None where the table marks none for that adapter.

    >>> default_provider("openai"), default_provider("anthropic"), default_provider("toy")
    ('openai-compatible', 'anthropic', None)
    """
    return next((p.name for p in load_providers().values() if p.adapter == adapter and p.default), None)


def unlisted_provider(adapter: str) -> Provider:
    """The provider of an adapter's entry that names none where ``providers.yaml`` has no default for that adapter
    (a provider protocol registered without a table entry): named after the adapter, no rules, no image limits,
    no quota texts known - what its server refuses is found out by asking."""
    return Provider(str(adapter), str(adapter), {}, (), ImageLimits(), ())


def provider_of(cfg: dict, where: str = "registry") -> Provider:
    """The :class:`Provider` a registry entry names (``provider``; else its adapter's :func:`default_provider`,
    else :func:`unlisted_provider`); SystemConfigError for an unknown name or one of another adapter family."""
    providers = load_providers()
    adapter = cfg.get("adapter")
    name = cfg.get("provider") or default_provider(adapter)
    if name is None:
        return unlisted_provider(adapter)
    if name not in providers:
        raise SystemConfigError(f"{where}: field provider: {name!r} is not one of {sorted(providers)} "
                                f"({PROVIDERS_FILE.name})")
    p = providers[name]
    if p.adapter != adapter:
        raise SystemConfigError(f"{where}: field provider: {name} is spoken to by the {p.adapter} adapter, not "
                                f"{adapter}")
    return p


def api_version_of(cfg: dict, provider: Provider, where: str = "registry") -> Optional[str]:
    """The API version an entry sends (its ``api_version``, else the provider's first)."""
    v = cfg.get("api_version")
    if v is None:
        return provider.api_version
    if str(v) not in provider.api_versions:
        raise SystemConfigError(f"{where}: field api_version: {v!r} is not one of {list(provider.api_versions)} "
                                f"for provider {provider.name}")
    return str(v)


def sampling_for(cfg: dict, provider: Provider) -> dict:
    """The sampling fields an entry sends: the provider's defaults, then the entry's own settings (a ``null``
    setting: not sent). Only the fields sent are in the result.

    >>> p = load_providers()
    >>> sampling_for({"adapter": "anthropic"}, p["anthropic"]), sampling_for({}, p["vllm"])
    ({}, {'temperature': 0})
    >>> sampling_for({"temperature": None, "top_k": 20}, p["vllm"])
    {'top_k': 20}
    """
    out = dict(provider.defaults)
    for f in SAMPLING_FIELDS:
        if f in cfg:
            if cfg[f] is None:
                out.pop(f, None)
            else:
                out[f] = cfg[f]
    return out


def rule_problems(cfg: dict, where: str = "registry") -> list[str]:
    """The provider rules an API entry breaks, each as one line naming the field, the rule and its source."""
    provider = provider_of(cfg, where)
    version = api_version_of(cfg, provider, where)
    sent = sampling_for(cfg, provider)
    model = str(cfg.get("model") or "")
    out = []
    n_images = 1 if cfg.get("variant") == "one-image" else 2
    if provider.images.max_images is not None and n_images > provider.images.max_images:
        out.append(f"{where}: provider {provider.name} takes at most {provider.images.max_images} image(s) per "
                   f"request, the {cfg.get('variant') or 'two-image'} prompt sends {n_images} (source: "
                   f"{provider.images.source}); use variant: one-image")
    for r in provider.rules:
        if r.applies(model, version):
            why = r.problem(sent)
            if why:
                at = f" on API version {version}" if r.api_version else ""
                out.append(f"{where}: provider {provider.name}{at} {why} for model {model} (rule {r.id}; source: "
                           f"{r.source}); remove the field or set it to null")
    return out


def rule_advice(cfg: dict, where: str = "registry") -> list[str]:
    """Settings the provider accepts but advises against (warnings, not refusals)."""
    provider = provider_of(cfg, where)
    version = api_version_of(cfg, provider, where)
    sent = sampling_for(cfg, provider)
    model = str(cfg.get("model") or "")
    return [f"provider {provider.name} {a} for {model} (rule {r.id}; source: {r.source})"
            for r in provider.rules if r.applies(model, version) and (a := r.advice(sent))]


def quota_marker(provider: Provider, text: str) -> Optional[str]:
    """The first of the provider's quota-error texts found in ``text`` (an error's message and body), or None.

    >>> quota_marker(load_providers()["moonshot"], '{"type": "exceeded_current_quota_error"}')
    'exceeded_current_quota_error'
    """
    for q in provider.quota_errors:
        if q in text:
            return q
    return None
