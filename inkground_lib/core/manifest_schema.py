"""The JSON Schema (draft 2020-12) of a dataset's ``manifest.json``, the one source of a manifest's field
types, and the faults it finds, each naming file, record and field.

The schema is shipped as ``inkground_lib/core/dataset.schema.json``, this module's output (``python -m
inkground_lib.core.manifest_schema`` rewrites it; ``tests/test_validate.py`` checks they agree); the format's
constants (name, version, kinds, splits, the id rule) are defined here, once. Both
:func:`inkground_lib.core.dataset.load_dataset` and ``inkground validate`` check a manifest with
:func:`schema_problems`. The schema states what a single JSON document can state; what needs the other files
or comparisons between fields (photo size, box inside the page and x0 <= x1, unique ids, confinement of paths,
ink contents) stays with :func:`~inkground_lib.core.dataset.load_dataset`. Coordinates are page pixels of the
page photo, origin top-left, y down.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from inkground_lib.core.defaults import MAX_PAGE_SIDE, MAX_WORD_TEXT
from inkground_lib.core.files import atomic_write_text

SCHEMA = "inkground-dataset"
SCHEMA_VERSION = 1
KINDS = ("synth", "recorded", "inkground", "benchmark")
SPLITS = ("train", "test")

ID_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""Page and word ids become file names (``pages/<id>.jpg``, ``inks/<id>.json``, cache keys): a letter or digit,
then letters, digits, ``.``, ``_`` or ``-``, at most 128 characters in all (no separators, no ``..`` start)."""

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FILE_NAME = "dataset.schema.json"


def schema_file() -> Path:
    """The shipped schema file (package data of ``inkground_lib.core``)."""
    return Path(str(files("inkground_lib.core").joinpath(SCHEMA_FILE_NAME)))


def id_pattern() -> str:
    """:data:`ID_RULE` as a JSON Schema ``pattern`` matching whole strings.

    JSON Schema patterns are searched, not matched in full, so the rule is anchored: ``^`` at the start and
    ``(?![\\s\\S])`` ("no character follows") at the end, which means the same in ECMA-262 and Python
    (Python's ``$`` would also accept a final newline).

    >>> import re
    >>> bool(re.search(id_pattern(), "p0001-w003")), bool(re.search(id_pattern(), "p0001\\n"))
    (True, False)
    """
    return rf"^(?:{ID_RULE.pattern})(?![\s\S])"


RELATIVE_PATTERN = "^[^/]"
"""A path in a manifest is relative to the dataset folder (the schema's pattern: no leading ``/``)."""

TEXT_PATTERN = r"\S"
"""A word's text holds at least one character that is not white space (the schema's pattern)."""


def manifest_schema() -> dict:
    """The JSON Schema of ``manifest.json`` as a dict (what :func:`schema_text` writes)."""
    id_rule = ("a letter or digit, then letters, digits, '.', '_' or '-'; at most 128 characters (ids become "
               "file names)")
    return {
        "$schema": DRAFT,
        "title": "inkground dataset manifest (manifest.json)",
        "description": (
            "The manifest of an inkground dataset folder: page photos (pages/) and their words' inks (inks/). "
            "Coordinates are page pixels of the page photo, origin top-left, y down. Paths are relative to "
            "the folder and may not leave it. Keys not listed here are ignored. Checked further when loaded: "
            "the photo's size equals width x height and it decodes, every box lies inside the page (1 px "
            "tolerance) with x0 <= x1 and y0 <= y1 and is not a single point, page ids and word ids are unique "
            "in the dataset (also ignoring case: they name files), the inks file holds a non-empty reference "
            "ink for every word, every ink point is finite and lies on the page (a margin of 5% of its width "
            "and height allowed), the manifest is a regular file (not a link)."),
        "type": "object",
        "required": ["schema", "schema_version", "name", "kind", "reference", "pages"],
        "properties": {
            "schema": {"description": "the format's name", "const": SCHEMA},
            "schema_version": {"description": "the format's version", "type": "integer",
                               "const": SCHEMA_VERSION},
            "name": {"description": "the dataset's name", "type": "string"},
            "kind": {"description": "how the dataset was made", "type": "string", "enum": list(KINDS)},
            "reference": {"description": "what the reference inks are: \"true ink\" or "
                                         "\"pseudo-label: <derenderer>\"", "type": "string"},
            "meta": {"description": "free-form provenance (generator, parameters, seed, sources)",
                     "type": "object"},
            "pages": {"description": "the pages, in order", "type": "array", "items": {"$ref": "#/$defs/page"}},
        },
        "$defs": {
            "id": {"description": id_rule, "type": "string", "pattern": id_pattern()},
            "path": {"description": "a path relative to the dataset folder, '/'-separated, inside the folder",
                     "type": "string", "pattern": RELATIVE_PATTERN},
            "page": {
                "description": "one page photo and its words",
                "type": "object",
                "required": ["id", "image", "inks", "writer", "width", "height", "words"],
                "properties": {
                    "id": {"$ref": "#/$defs/id"},
                    "image": {"$ref": "#/$defs/path", "description": "the page photo, e.g. pages/<id>.jpg"},
                    "inks": {"$ref": "#/$defs/path",
                             "description": "the page's inks file (schema inkground-inks), e.g. inks/<id>.json"},
                    "writer": {"description": "the writer's id", "type": "string"},
                    "width": {"description": "the photo's width in pixels", "type": "integer", "minimum": 1,
                              "maximum": MAX_PAGE_SIDE},
                    "height": {"description": "the photo's height in pixels", "type": "integer", "minimum": 1,
                               "maximum": MAX_PAGE_SIDE},
                    "words": {"description": "the page's words", "type": "array",
                              "items": {"$ref": "#/$defs/word"}},
                },
            },
            "word": {
                "description": "one word of a page",
                "type": "object",
                "required": ["id", "text", "box"],
                "properties": {
                    "id": {"$ref": "#/$defs/id"},
                    "text": {"description": "the word's transcription (not empty, not only white space, at most "
                                            f"{MAX_WORD_TEXT} characters)",
                             "type": "string", "pattern": TEXT_PATTERN, "maxLength": MAX_WORD_TEXT},
                    "box": {"description": "[x0, y0, x1, y1] in page pixels (y down): top-left and bottom-right "
                                           "corners, x0 <= x1, y0 <= y1",
                            "type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4},
                    "split": {"description": "train or test (default train)", "type": "string",
                              "enum": list(SPLITS)},
                },
            },
        },
    }


def schema_text() -> str:
    """The schema as the shipped file holds it: JSON, two-space indent, keys in the order above."""
    return json.dumps(manifest_schema(), indent=2, ensure_ascii=False) + "\n"


def write_schema(path: str | Path | None = None) -> Path:
    """Write the schema (atomically) to ``path`` (default: the shipped file) and return the path."""
    return atomic_write_text(Path(path) if path is not None else schema_file(), schema_text())


def _is_integer(checker, value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(checker, value) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


@functools.lru_cache(maxsize=1)
def manifest_validator():
    """A draft 2020-12 validator of :func:`manifest_schema` with JSON's types as ``load_dataset`` reads them:
    an integer is written without a decimal point (``1.0`` is not an integer) and a number is finite (Python's
    json module reads ``NaN`` / ``Infinity``, which are not JSON). Built once per process."""
    schema = manifest_schema()
    return json_validator(_inline_refs(schema, schema["$defs"]))


def json_validator(schema: dict):
    """A draft 2020-12 validator of ``schema`` (itself checked) with JSON's types as our readers read them: an
    integer is written without a decimal point and a number is finite. Shared by every JSON file checked
    against a schema (a dataset manifest here, the results archive's manifest in publish.results)."""
    from jsonschema import Draft202012Validator, validators  # ~0.1 s: only when a file is checked

    checker = Draft202012Validator.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number})
    cls = validators.extend(Draft202012Validator, type_checker=checker)
    cls.check_schema(schema)
    return cls(schema)


def sorted_faults(validator, doc) -> list:
    """The jsonschema errors of ``doc``, sorted by place (object keys alphabetically, array items by index)."""
    def order(e):
        return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in e.absolute_path]

    return sorted(validator.iter_errors(doc), key=order)


def fault_text(error) -> str:
    """One line for a jsonschema ``error``: the field at fault as a path (``files[3].sha256``) and what is wrong
    with it, e.g. ``field files[3].sha256: missing``."""
    message, missing = _message(error)
    path = list(error.absolute_path) + ([missing] if missing is not None else [])
    field = _field([str(p) if i == 0 else p for i, p in enumerate(path)])
    return f"field {field}: {message}" if field else message


def _inline_refs(node, defs: dict):
    """``node`` with each local ``{"$ref": "#/$defs/NAME", ...}`` replaced by the definition NAME (merged with
    the other keys beside the ``$ref``) and ``$defs`` dropped: the same schema, checked twice as fast
    (jsonschema resolves a ``$ref`` anew for every page and word: 0.28 against 0.40-0.58 s for the 5,237 words
    of the book's candidates, measured 2026-12-01). The manifest schema has no recursive definitions.

    >>> _inline_refs({"$defs": {"id": {"type": "string"}}, "items": {"$ref": "#/$defs/id", "title": "x"}},
    ...              {"id": {"type": "string"}})
    {'items': {'type': 'string', 'title': 'x'}}
    """
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    if "$ref" in node:
        out.update(_inline_refs(defs[node["$ref"].removeprefix("#/$defs/")], defs))
    out.update({k: _inline_refs(v, defs) for k, v in node.items() if k not in ("$ref", "$defs")})
    return out


# --------------------------------------------------------------------------------------------- faults

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


def _record(manifest, path: list, pointers: bool = True) -> tuple[str, list]:
    """(record name, the rest of ``path`` below the record) for an error at ``path`` in the manifest. The name
    is the page / word ids with the record's place, e.g. ``"page p1 word w2 (pages/1/words/2)"``; without
    ``pointers`` the place is left out when every id on the way is valid (``"page p1 word w2"``, the form of
    load_dataset's other messages)."""
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
    if shown and not pointers and all(names):
        return shown, path[depth:]
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
    if kw == "pattern" and value == TEXT_PATTERN:
        return f"{_quote(inst)}: a word's text may not be empty or only white space", None
    if kw == "pattern" and value == RELATIVE_PATTERN:
        return f"{_quote(inst)} is absolute: paths are relative to the dataset folder (no leading '/')", None
    if kw == "pattern":
        return f"{_quote(inst)} is not {schema.get('description') or 'of the pattern ' + value}", None
    if kw == "const" and list(error.absolute_path) == ["schema_version"] and _is_integer(None, inst):
        return f"{inst} is not supported (this library reads {value})", None
    if kw == "const":
        return f"expected {value!r}, got {_quote(inst)}", None
    if kw == "enum":
        return f"{_quote(inst)} is not one of {', '.join(map(repr, value))}", None
    if kw in ("minItems", "maxItems") and isinstance(inst, list):
        return f"expected {value} numbers [x0, y0, x1, y1], got {len(inst)}: {_quote(inst)}", None
    if kw == "minimum":
        return f"must be at least {value}, got {_quote(inst)}", None
    if kw == "maximum" and value == MAX_PAGE_SIDE:
        return f"{_quote(inst)} px; pages are at most {value} x {value} px (MAX_PAGE_SIDE)", None
    if kw == "maximum":
        return f"must be at most {value}, got {_quote(inst)}", None
    return error.message[:200], None


def schema_problems(manifest, file: str | Path, pointers: bool = True) -> list[Problem]:
    """Every schema fault of a parsed manifest, naming ``file``; sorted by place (object keys alphabetically,
    array items by index). ``pointers``: see :func:`_record` (load_dataset leaves them out).

    >>> for p in schema_problems({"schema": "inkground-dataset", "schema_version": 2, "name": "x"}, "m.json"):
    ...     print(p)
    m.json: field kind: missing
    m.json: field reference: missing
    m.json: field pages: missing
    m.json: field schema_version: 2 is not supported (this library reads 1)
    """
    out = []
    for error in sorted_faults(manifest_validator(), manifest):
        path = list(error.absolute_path)
        record, rest = _record(manifest, path, pointers)
        message, missing = _message(error)
        field = missing if missing is not None and not rest else _field(rest)
        out.append(Problem(str(file), record, field, message, "schema", _pointer(path)))
    return out


if __name__ == "__main__":
    print(write_schema())
