"""Checking a dataset folder someone brings: every fault of ``manifest.json`` against the schema, then the
files (photos, their sizes, the inks) with :func:`inkground_lib.core.dataset.load_dataset`.

``validate_dataset(DIR)`` returns the problems, ``format_report`` the lines to print and ``exit_code`` the
command's exit status (0 valid, 1 invalid, 2 unreadable).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from inkground_lib.core.dataset import (
    ID_RULE,
    DatasetError,
    check_file_size,
    load_dataset,
)
from inkground_lib.core.defaults import MAX_MANIFEST_BYTES, MAX_MANIFEST_ENV
from inkground_lib.core.manifest_schema import id_pattern, manifest_validator

MANIFEST = "manifest.json"
STAGES = ("unreadable", "schema", "files")
"""What found a problem: the manifest could not be read as JSON; the schema; load_dataset's file checks."""
MAX_SHOWN = 60
"""Characters of a faulty value quoted in a message."""


@dataclass(frozen=True)
class Problem:
    """One fault of a dataset folder.

    ``file``: the file at fault (the manifest, a photo's manifest entry, an inks file); ``record``: the page
    / word, e.g. ``"page p0003 word p0003-w007 (pages/3/words/7)"``, ``""`` for the file as a whole;
    ``field``: the field at fault, e.g. ``"box"`` or ``"box[2]"``, ``""`` for the record as a whole;
    ``stage``: one of :data:`STAGES`; ``pointer``: the JSON pointer of the faulty value in the manifest
    (schema problems only), e.g. ``"/pages/3/words/7/box"``.
    """

    file: str
    record: str
    field: str
    message: str
    stage: str = "schema"
    pointer: str = ""

    def __str__(self) -> str:
        parts = [self.file] + ([self.record] if self.record else []) + (
            [f"field {self.field}"] if self.field else []) + [self.message]
        return ": ".join(parts)


def _quote(value) -> str:
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN - 3] + "..."


def _json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def _pointer(path) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _record(manifest, path: list) -> tuple[str, list]:
    """(record name, the rest of ``path`` below the record) for an error at ``path`` in the manifest."""
    if len(path) < 2 or path[0] != "pages" or not isinstance(path[1], int):
        return "", path
    names, node, depth = [], manifest, 0
    for kind, key in (("page", "pages"), ("word", "words")):
        if len(path) < depth + 2 or path[depth] != key or not isinstance(path[depth + 1], int):
            break
        node = node[key][path[depth + 1]]
        rid = node.get("id") if isinstance(node, dict) else None
        names.append(f"{kind} {rid}" if isinstance(rid, str) and ID_RULE.fullmatch(rid) else None)
        depth += 2
    pointer = "/".join(str(p) for p in path[:depth])
    shown = " ".join(n for n in names if n)
    record = f"{shown} ({pointer})" if shown else pointer
    return record, path[depth:]


def _field(rest: list) -> str:
    if not rest:
        return ""
    return str(rest[0]) + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in rest[1:])


def _message(error) -> tuple[str, str | None]:
    """(message, missing field or None) of a jsonschema error, quoting at most MAX_SHOWN characters."""
    kw, value, inst, schema = error.validator, error.validator_value, error.instance, error.schema
    if kw == "required":
        missing = [k for k in value if isinstance(inst, dict) and k not in inst]
        name = next((k for k in missing if error.message.startswith(repr(k))), missing[0] if missing else "?")
        return "missing", name
    if kw == "type":
        want = {"integer": "an integer (no decimal point)", "number": "a finite number", "string": "a string",
                "array": "an array", "object": "an object", "boolean": "true or false"}.get(value, value)
        return f"expected {want}, got {_json_type(inst)} {_quote(inst)}", None
    if kw == "pattern" and value == id_pattern():
        return f"{_quote(inst)} is not a valid id: {schema['description']}", None
    if kw == "pattern":
        return f"{_quote(inst)} must be a relative path (no leading '/')", None
    if kw == "const":
        return f"expected {value!r}, got {_quote(inst)}", None
    if kw == "enum":
        return f"{_quote(inst)} is not one of {', '.join(map(repr, value))}", None
    if kw in ("minItems", "maxItems") and isinstance(inst, list):
        return f"expected {value} numbers [x0, y0, x1, y1], got {len(inst)}: {_quote(inst)}", None
    if kw == "minimum":
        return f"must be at least {value}, got {_quote(inst)}", None
    if kw == "maximum":
        return f"must be at most {value}, got {_quote(inst)}", None
    return error.message[:200], None


def schema_problems(manifest, file: str | Path) -> list[Problem]:
    """Every schema fault of a parsed manifest, naming ``file``; sorted by place (object keys alphabetically,
    array items by index)."""
    validator = manifest_validator()

    def order(e):
        return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in e.absolute_path]

    out = []
    for error in sorted(validator.iter_errors(manifest), key=order):
        path = list(error.absolute_path)
        record, rest = _record(manifest, path)
        message, missing = _message(error)
        field = missing if missing is not None and not rest else _field(rest)
        out.append(Problem(str(file), record, field, message, "schema", _pointer(path)))
    return out


_LOAD_MESSAGE = re.compile(r"(?P<file>.+?): (?:(?P<record>.+?): )?field (?P<field>[^:]+?): (?P<message>.*)", re.S)


def problem_from_error(error: DatasetError) -> Problem:
    """A :class:`Problem` from load_dataset's message ("<file>: <record>: field <field>: <what>")."""
    text = str(error)
    m = _LOAD_MESSAGE.fullmatch(text)
    if m:
        return Problem(m["file"], m["record"] or "", m["field"], m["message"], "files")
    file, _, rest = text.partition(": ")
    return Problem(file, "", "", rest or text, "files")


def validate_dataset(path: str | Path, *, max_manifest_bytes: int | None = None,
                     max_ink_bytes: int | None = None) -> list[Problem]:
    """Check the dataset folder ``path``; [] when it loads.

    First the manifest against the schema (:mod:`inkground_lib.core.manifest_schema`): every fault is
    returned. Only if there is none, the folder is loaded with :func:`load_dataset`, which checks the files
    (photos exist and their sizes are the manifest's, boxes inside the pages, inks readable and non-empty,
    unique ids) and stops at the first fault: then that one problem is returned. A folder or manifest that
    cannot be read (missing, not JSON, over the manifest read limit) gives one problem of stage
    ``"unreadable"``. ``max_manifest_bytes`` / ``max_ink_bytes``: the read limits in bytes, as in
    :func:`load_dataset` (default: MAX_MANIFEST_BYTES / MAX_INK_FILE_BYTES or their environment variables).
    """
    root = Path(path)
    mpath = root / MANIFEST
    if not root.is_dir():
        return [Problem(str(root), "", "", "is not a folder (a dataset is a folder with a manifest.json)",
                        "unreadable")]
    if not mpath.is_file():
        return [Problem(str(mpath), "", "", "the manifest is missing", "unreadable")]
    try:
        check_file_size(mpath, max_manifest_bytes, MAX_MANIFEST_BYTES, MAX_MANIFEST_ENV, DatasetError, "manifest",
                        "max_manifest_bytes")
        manifest = json.loads(mpath.read_text("utf-8"))
    except DatasetError as e:
        return [Problem(str(mpath), "", "", str(e).removeprefix(f"{mpath}: "), "unreadable")]
    except OSError as e:
        return [Problem(str(mpath), "", "", f"cannot be read ({e.strerror or e})", "unreadable")]
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        return [Problem(str(mpath), "", "", f"is not valid JSON ({e})", "unreadable")]
    except RecursionError:
        return [Problem(str(mpath), "", "", "is nested too deeply to be a manifest", "unreadable")]
    problems = schema_problems(manifest, mpath)
    if problems:
        return problems
    try:
        load_dataset(root, max_manifest_bytes=max_manifest_bytes, max_ink_bytes=max_ink_bytes)
    except DatasetError as e:
        return [problem_from_error(e)]
    return []


def exit_code(problems: list[Problem]) -> int:
    """0: a valid dataset; 1: faults found; 2: the folder or its manifest could not be read."""
    if any(p.stage == "unreadable" for p in problems):
        return 2
    return 1 if problems else 0


def format_report(path: str | Path, problems: list[Problem]) -> list[str]:
    """One line per problem and a summary: ``"N errors in DIR"`` or ``"DIR: valid dataset, P pages, W words"``
    (counts read from the manifest)."""
    if problems:
        n = len(problems)
        return [str(p) for p in problems] + [f"{n} error{'s' if n != 1 else ''} in {path}"]
    pages = json.loads((Path(path) / MANIFEST).read_text("utf-8"))["pages"]
    words = sum(len(p["words"]) for p in pages)
    return [f"{path}: valid dataset, {len(pages)} page{'s' if len(pages) != 1 else ''}, "
            f"{words} word{'s' if words != 1 else ''}"]
