"""Replaying recorded raw outputs from a JSONL file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from inkground_lib.core.ink import InkError, ink_from_lists
from inkground_lib.evaluation.systems.base import (
    MODEL_OUTPUT_STATUSES,
    RETRIED_ON_REQUEST,
    BaseSystem,
    Item,
    RawOutput,
    SystemConfigError,
    file_sha,
)


class ReplaySystem(BaseSystem):
    """Recorded raw outputs from a JSONL file (see module doc)."""

    adapter = "replay"
    kind = "replay"

    def __init__(self, name, cfg):
        super().__init__(name, cfg)
        path = cfg.get("path")
        if not path and cfg.get("path_env"):
            path = os.environ.get(cfg["path_env"])
            if not path:
                raise SystemConfigError(f"system {name}: environment variable {cfg['path_env']} is not set (it "
                                        f"must name the JSONL file of recorded outputs)")
        if not path:
            raise SystemConfigError(f"system {name}: field path: missing (or name a variable in path_env)")
        self.path = Path(path)
        if not self.path.is_file():
            raise SystemConfigError(f"system {name}: replay file {self.path} does not exist")
        self.source = cfg.get("source")
        self.records = self._load()
        self.file_sha = file_sha(str(self.path.resolve()))

    def _load(self) -> dict:
        out = {}
        with open(self.path, "r", encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    if not line.endswith("\n"):
                        break  # a torn last line (a writer killed mid-write): ignored
                    raise SystemConfigError(f"{self.path}: line {n}: not valid JSON") from None
                if not isinstance(rec, dict) or not isinstance(rec.get("word_id"), str):
                    raise SystemConfigError(f"{self.path}: line {n}: field word_id: missing or not a string")
                if self.source is not None and rec.get("system") != self.source:
                    continue
                if rec.get("status") not in (None,) + MODEL_OUTPUT_STATUSES:
                    continue  # "error", "interrupted": no answer
                if rec.get("raw_text") is None and rec.get("text") is None and rec.get("strokes") is None:
                    continue
                old = out.get(rec["word_id"])
                if old is None or old[1].get("status") in RETRIED_ON_REQUEST:
                    out[rec["word_id"]] = (n, rec)  # a later answer replaces a refusal / empty one (as the cache)
        return out

    def answer_params(self):
        return {"source": self.source}

    def _key_extra(self, item):
        return {"file": self.file_sha}

    def predict(self, item: Item) -> RawOutput:
        hit = self.records.get(item.word_id)
        if hit is None:
            return RawOutput(status="error", error=f"no recorded output for word {item.word_id}", attempts=0)
        n, rec = hit
        status = rec.get("status") if rec.get("status") in MODEL_OUTPUT_STATUSES else "ok"
        common = dict(status=status, finish_reason=rec.get("finish_reason"), usage=rec.get("usage") or {},
                      attempts=0)
        if rec.get("strokes") is not None and rec.get("raw_text") is None and rec.get("text") is None:
            try:
                return RawOutput(strokes=ink_from_lists(rec["strokes"], f"{self.path}: line {n}: strokes"),
                                 **common)
            except InkError as e:
                return RawOutput(status="error", error=str(e), attempts=0)
        text = rec.get("raw_text") if rec.get("raw_text") is not None else rec.get("text")
        return RawOutput(text=str(text), **common)
