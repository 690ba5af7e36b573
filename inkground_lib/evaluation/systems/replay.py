"""Replaying recorded raw outputs from a JSONL file.

A record answers one word of one dataset: it is matched to an item by the item's
:meth:`~inkground_lib.evaluation.systems.base.Item.word_key` (the page photo's content, the page and word ids, the
word's text, box and page size), recorded in its ``word_key`` field, never by the word id alone (answers recorded on
another dataset that reuses the ids are not scored as this one's). :func:`replay_record` writes such a record;
section 3's prediction caches carry the key too (``inkground_lib.evaluation.cache``).
"""

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
        self.word_ids: set = set()  # every word id the file answers (to say why a word has no answer)
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
                if not isinstance(rec.get("word_key"), str):
                    raise SystemConfigError(
                        f"{self.path}: line {n}: field word_key: missing: a recorded answer must say which word of "
                        f"which dataset it answers (write each line with "
                        f"inkground_lib.evaluation.systems.replay.replay_record(item, answer); a word id alone "
                        f"would match the same id of any dataset)")
                self.word_ids.add(rec["word_id"])
                if rec.get("status") not in (None,) + MODEL_OUTPUT_STATUSES:
                    continue  # "error", "interrupted": no answer
                if rec.get("raw_text") is None and rec.get("text") is None and rec.get("strokes") is None:
                    continue
                old = out.get(rec["word_key"])
                if old is None or old[1].get("status") in RETRIED_ON_REQUEST:
                    out[rec["word_key"]] = (n, rec)  # a later answer replaces a refusal / empty one (as the cache)
        return out

    def answer_params(self):
        return {"source": self.source}

    def _key_extra(self, item):
        return {"file": self.file_sha, "word_key": item.word_key()}

    def predict(self, item: Item) -> RawOutput:
        hit = self.records.get(item.word_key())
        if hit is None:
            why = (" of this dataset: the file's answer for this id was recorded for another word (another dataset, "
                   "or the word's page photo, text or box changed)" if item.word_id in self.word_ids else "")
            return RawOutput(status="error", error=f"no recorded output for word {item.word_id}{why}", attempts=0)
        n, rec = hit
        if rec.get("word_id") != item.word_id or rec.get("page_id", item.page_id) != item.page_id:
            return RawOutput(status="error", error=f"{self.path}: line {n}: recorded for word {rec.get('word_id')} "
                                                   f"but keyed as word {item.word_id}", attempts=0)
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


def replay_record(item: Item, answer=None, *, strokes=None, **fields) -> dict:
    """One line of a replay file: the model's raw ``answer`` (text) or ``strokes`` (an Ink, page pixels) for
    ``item``, keyed by its word (``word_id``, ``page_id``, ``word_key``); ``fields``: ``status``,
    ``finish_reason``, ``system``. Write it with ``json.dumps(record)`` and a newline."""
    from inkground_lib.core.ink import ink_to_lists

    rec = {"word_id": item.word_id, "page_id": item.page_id, "word_key": item.word_key()}
    if answer is not None:
        rec["raw_text"] = str(answer)
    if strokes is not None:
        rec["strokes"] = ink_to_lists(strokes)
    rec.update(fields)
    return rec
