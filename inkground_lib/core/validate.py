"""Checking a dataset folder someone brings: every fault of ``manifest.json`` against the schema
(:func:`inkground_lib.core.manifest_schema.schema_problems`), then the files (photos, their sizes, the inks)
with :func:`inkground_lib.core.dataset.load_dataset`.

``validate_dataset(DIR)`` returns the problems, ``format_report`` the lines to print and ``exit_code`` the
command's exit status (0 valid, 1 invalid, 2 unreadable).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from inkground_lib.core.dataset import (
    DatasetError,
    check_file_size,
    load_dataset,
    manifest_link_problem,
    off_box_words,
)
from inkground_lib.core.defaults import MAX_MANIFEST_BYTES, MAX_MANIFEST_ENV
from inkground_lib.core.manifest_schema import STAGES, Problem, schema_problems

__all__ = ["Problem", "STAGES", "schema_problems", "problem_from_error", "validate_dataset", "exit_code",
           "format_report"]

MANIFEST = "manifest.json"


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
    unique ids) and decodes every photo (a truncated JPEG is refused, naming it), and stops at the first fault:
    then that one problem is returned. Then every word's ink is checked against its box (:func:`box_problems`).
    A dataset with no pages, or no words, is a problem too (nothing to
    evaluate). A folder or manifest that cannot be read (missing, a symbolic link, not JSON, over the manifest
    read limit) gives one problem of stage ``"unreadable"``. ``max_manifest_bytes`` / ``max_ink_bytes``: the read limits in bytes, as in
    :func:`load_dataset` (default: MAX_MANIFEST_BYTES / MAX_INK_FILE_BYTES or their environment variables).
    """
    root = Path(path)
    mpath = root / MANIFEST
    if not root.is_dir():
        return [Problem(str(root), "", "", "is not a folder (a dataset is a folder with a manifest.json)",
                        "unreadable")]
    link = manifest_link_problem(mpath)
    if link:
        return [Problem(str(mpath), "", "", link, "unreadable")]
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
        ds = load_dataset(root, max_manifest_bytes=max_manifest_bytes, max_ink_bytes=max_ink_bytes,
                          decode_images=True, check_boxes=False)  # every word off its box is listed below
    except DatasetError as e:
        return [problem_from_error(e)]
    if not ds.pages:
        return [Problem(str(mpath), "", "pages", "the dataset has no pages (nothing to evaluate)", "files")]
    if not ds.n_words:
        return [Problem(str(mpath), "", "pages", f"none of its {len(ds.pages)} pages has a word (nothing to "
                                                 f"evaluate)", "files")]
    return box_problems(ds, manifest, root)


def box_problems(ds, manifest: dict, root: Path) -> list[Problem]:
    """Every word whose reference ink (or true ink) does not lie at its box
    (:func:`~inkground_lib.core.dataset.box_problem`, the check every command that loads a dataset makes): each a
    problem naming the page's inks file, the page and word, and the field (``ink`` / ``true_ink``)."""
    inks_of = {p.get("id"): p.get("inks", "") for p in manifest.get("pages", []) if isinstance(p, dict)}
    return [Problem(str(root / inks_of.get(page.id, "")), f"page {page.id} word {w.id}", name, why, "files")
            for page, w, name, why in off_box_words(ds)]


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
