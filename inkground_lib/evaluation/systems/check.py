"""``inkground check``: is each system ready to run here, before a real run spends anything?

For every system: is its registry entry valid, does the provider accept its settings (sampling, message shape:
the rules of ``providers.yaml``, checked offline before anything is sent), which environment variables it needs
are unset (names only, never values), does its endpoint answer, is its model id served (the endpoint's model
list), and - with ``live`` - does one small real request come back as a parseable answer, within the system's
own timeout (the registry's ``timeout``, as ``predict`` uses it: thinking models get minutes).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional, Sequence

from inkground_lib.core.defaults import CHECK_TIMEOUT
from inkground_lib.evaluation.systems.base import SystemConfigError, SystemUnavailable


@dataclass
class CheckRow:
    """One system's readiness. ``endpoint``/``model_listed``/``live`` are "-" where not applicable or not
    reached; ``ready`` is False when anything needed failed, and ``detail`` says what."""

    system: str
    adapter: str = "?"
    config: str = "ok"
    missing_env: list = field(default_factory=list)
    endpoint: str = "-"
    model_listed: str = "-"
    live: str = "-"
    ready: bool = False
    detail: str = ""


def needed_env(cfg: dict) -> list[str]:
    """Environment variables an entry needs that are unset (names only)."""
    names = []
    if cfg.get("api_key_env") and not cfg.get("key_optional"):
        names.append(cfg["api_key_env"])
    if cfg.get("base_url_env") and not cfg.get("default_base_url"):
        names.append(cfg["base_url_env"])
    for k in ("model_dir_env", "path_env"):
        if cfg.get(k):
            names.append(cfg[k])
    return [n for n in names if not os.environ.get(n)]


def live_item():
    """A small real request: the word "ink" drawn (Hershey font strokes, 3 px pen) on a 240 x 120 page, which
    is also the in-context example. Returns a systems Item."""
    import numpy as np
    from PIL import Image, ImageDraw

    from inkground_lib.evaluation.prompt import Example
    from inkground_lib.evaluation.systems.base import Item
    from inkground_lib.evaluation.systems.local import FontSystem

    box, size = (30.0, 30.0, 210.0, 90.0), (240, 120)
    probe = Item("check-w0", "ink", box, "check-p0", size)
    ink = FontSystem("font", {"font": "futural"}).predict(probe).strokes
    img = Image.new("RGB", size, (250, 248, 240))
    draw = ImageDraw.Draw(img)
    for stroke in ink.strokes:
        pts = [(float(x), float(y)) for x, y in stroke[:, :2]]
        if len(pts) > 1:
            draw.line(pts, fill=(20, 20, 60), width=3)
    photo = np.asarray(img)
    example = Example(photo=photo, word="ink", strokes=ink, page_size=(float(size[0]), float(size[1])),
                      page_id="check-example", word_id="check-example-w0")
    item = Item("check-w0", "ink", box, "check-p0", size, image=photo)

    def build(variant: str):
        from inkground_lib.evaluation.prompt import build_request

        return build_request(photo, (float(size[0]), float(size[1])), "ink", example, variant=variant,
                             page_id="check-p0", word_id="check-w0")

    item.request = build
    return item


def check_system(name: str, registry: Optional[dict] = None, live: bool = False,
                 timeout: float = CHECK_TIMEOUT) -> CheckRow:
    """Check one system (see module doc). Never raises for a system's own faults: they are the row's detail."""
    from inkground_lib.evaluation.systems.registry import load_registry, make_system, provider_adapters

    row = CheckRow(name)
    try:
        reg = registry if registry is not None else load_registry()
    except SystemConfigError as e:
        row.config, row.detail = "invalid", str(e)
        return row
    cfg = reg.get(name)
    if cfg is None:
        row.config, row.detail = "unknown", f"no system {name!r} in the registry"
        return row
    row.adapter = str(cfg.get("adapter"))
    if row.adapter in provider_adapters():  # what the provider would refuse, before anything is sent
        from inkground_lib.evaluation.systems.providers import rule_advice, rule_problems

        try:
            problems, advice = rule_problems(cfg, f"system {name}"), rule_advice(cfg, f"system {name}")
        except SystemConfigError as e:
            problems, advice = [str(e)], []
        if problems:
            row.config, row.detail = "refused", "; ".join(problems)
            return row
        if advice:
            row.detail = "warning: " + "; ".join(advice)
    row.missing_env = needed_env(cfg)
    if row.missing_env:
        row.config, row.detail = "ok", "set " + ", ".join(row.missing_env)
        return row
    try:
        system = make_system(name, registry=reg)
    except SystemUnavailable as e:
        row.detail = str(e)
        return row
    except SystemConfigError as e:
        row.config, row.detail = "invalid", str(e)
        return row
    try:
        if getattr(system, "kind", None) != "api":
            row.ready = True
            row.detail = "local system: runs here"
            if live:  # e.g. InkSight: its worker, environment and model answer one word
                out = system.predict(live_item())
                n = 0 if out.strokes is None else out.strokes.n_points
                row.live = f"{out.status}: {n} points" if out.status != "error" else f"error: {out.error}"
                row.ready = out.status == "ok" and n > 0
                row.detail = "local system: runs here" if row.ready else row.live
            return row
        try:
            served = system.list_models(timeout)
            row.endpoint = "answers"
        except Exception as e:  # noqa: BLE001 - any failure is the row's detail
            row.endpoint, row.detail = "no answer", system.scrub(_short(e))
            return row
        if served is None:
            row.model_listed = "no list"
        elif any(m == system.model or m.endswith("/" + system.model) for m in served):
            row.model_listed = "yes"
        else:
            row.model_listed = "no"
            shown = ", ".join(sorted(served)[:8]) + (" ..." if len(served) > 8 else "")
            row.detail = system.scrub(f"model {system.model!r} is not in the endpoint's list ({shown or 'empty'})")
            return row
        row.ready = True
        if live:
            row.live, ok = live_request(system)
            row.ready = ok
            if not ok:
                row.detail = row.live
        return row
    finally:
        getattr(system, "close", lambda: None)()


def live_request(system) -> tuple[str, bool]:
    """Send :func:`live_item` once (no retry) and parse the answer: (what happened, usable). The request is
    allowed the system's own timeout (the registry's ``timeout``), as in ``predict``: a thinking model may take
    minutes, and a short check timeout would call a ready system not ready."""
    from inkground_lib.evaluation.parse import parse_strokes

    system.retry.max_attempts = 1
    item = live_item()
    out = system.predict(item)
    if out.status in ("error", "interrupted"):
        return f"{out.status}: {system.scrub(out.error)}", False
    res = parse_strokes(out.text or "", page_size=item.page_size)
    ok = out.status in ("ok", "truncated") and res.usable
    return f"{out.status}, parsed {res.status}: {len(res.strokes)} strokes, {res.n_points} points", ok


def _short(e: BaseException) -> str:
    code = getattr(e, "status_code", None)
    kind = type(e).__name__
    if "Timeout" in kind:
        return f"{kind}: no answer within the timeout"
    msg = getattr(e, "message", None) or str(e)
    return f"{kind}: " + (f"HTTP {code}: " if code else "") + str(msg)[:200]


def check_systems(names: Optional[Sequence[str]] = None, live: bool = False, timeout: float = CHECK_TIMEOUT,
                  registry: Optional[dict] = None) -> list[CheckRow]:
    """:func:`check_system` for each of ``names`` (default: every registered system)."""
    from inkground_lib.evaluation.systems.registry import load_registry

    if names is None:
        try:
            names = list((registry if registry is not None else load_registry()).keys())
        except SystemConfigError as e:
            return [CheckRow("(registry)", config="invalid", detail=str(e))]
    return [check_system(n, registry, live, timeout) for n in names]


def check_table(rows: Sequence[CheckRow]) -> str:
    """The rows as one plain-text table."""
    import pandas as pd

    df = pd.DataFrame([{"system": r.system, "adapter": r.adapter, "config": r.config,
                        "missing env": ", ".join(r.missing_env) or "-", "endpoint": r.endpoint,
                        "model listed": r.model_listed, "live": r.live, "ready": "yes" if r.ready else "NO",
                        "detail": r.detail} for r in rows])
    with pd.option_context("display.max_colwidth", 160, "display.width", 250):
        return df.to_string(index=False)
