"""The JSON Schema (draft 2020-12) of a dataset's ``manifest.json``, generated from the constants of
:mod:`inkground_lib.core.dataset` and shipped as ``inkground_lib/core/dataset.schema.json``.

The shipped file is this module's output (``python -m inkground_lib.core.manifest_schema`` rewrites it;
``tests/test_validate.py`` checks they agree), so the id pattern, kinds, splits and schema version are each
defined once, in ``dataset.py``. The schema states what a single JSON document can state; what needs the
other files or comparisons between fields (photo size, box inside the page and x0 <= x1, unique ids,
confinement of paths, ink contents) stays with :func:`inkground_lib.core.dataset.load_dataset`.
Coordinates are page pixels of the page photo, origin top-left, y down.
"""

from __future__ import annotations

import json
import math
from importlib.resources import files
from pathlib import Path

from inkground_lib.core.dataset import ID_RULE, KINDS, SCHEMA, SCHEMA_VERSION, SPLITS
from inkground_lib.core.defaults import MAX_PAGE_SIDE
from inkground_lib.core.files import atomic_write_text

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FILE_NAME = "dataset.schema.json"


def schema_file() -> Path:
    """The shipped schema file (package data of ``inkground_lib.core``)."""
    return Path(str(files("inkground_lib.core").joinpath(SCHEMA_FILE_NAME)))


def id_pattern() -> str:
    """:data:`~inkground_lib.core.dataset.ID_RULE` as a JSON Schema ``pattern`` matching whole strings.

    JSON Schema patterns are searched, not matched in full, so the rule is anchored: ``^`` at the start and
    ``(?![\\s\\S])`` ("no character follows") at the end, which means the same in ECMA-262 and Python
    (Python's ``$`` would also accept a final newline).

    >>> import re
    >>> bool(re.search(id_pattern(), "p0001-w003")), bool(re.search(id_pattern(), "p0001\\n"))
    (True, False)
    """
    return rf"^(?:{ID_RULE.pattern})(?![\s\S])"


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
            "the photo's size equals width x height, every box lies inside the page (1 px tolerance) with "
            "x0 <= x1 and y0 <= y1 and is not a single point, page ids and word ids are unique in the "
            "dataset, the inks file holds a non-empty reference ink for every word."),
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
                     "type": "string", "pattern": "^[^/]"},
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
                    "text": {"description": "the word's transcription", "type": "string"},
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


def manifest_validator():
    """A draft 2020-12 validator of :func:`manifest_schema` with JSON's types as ``load_dataset`` reads them:
    an integer is written without a decimal point (``1.0`` is not an integer) and a number is finite (Python's
    json module reads ``NaN`` / ``Infinity``, which are not JSON)."""
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number})
    cls = validators.extend(Draft202012Validator, type_checker=checker)
    schema = manifest_schema()
    cls.check_schema(schema)
    return cls(schema)


if __name__ == "__main__":
    print(write_schema())
