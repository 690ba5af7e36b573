"""The results a reviewer checks, in one archive: the book's executed notebooks, every CSV, JSON and JSONL file of
the run and dataset folders its sections read or wrote (the folders their parameters name: tables, inks, each
system's predictions), the paper's reported numbers (data/paper/), and a manifest saying of each file its sha256,
its size and which section made or read it with which parameters; with the companion's citation (CITATION.cff and
BibTeX). At most ARCHIVE_CAP (100 MiB); ``inkground restore`` turns it back into the book's runs
(:mod:`inkground_lib.publish.restore`).

    python -m inkground_lib.publish.results pack _build/html/inkground-results.zip
    python -m inkground_lib.publish.results verify _build/html/inkground-results.zip [--manifest-sha256 HEX]
    python -m inkground_lib.publish.results members _build/html/inkground-results.zip   # a table of what it holds

``verify`` recomputes each file's sha256 from the archive and compares it with the manifest, the manifest's own
sha256 with the one the book's reviewers' page prints (the anchor: a file edited together with its line in the
manifest changes it; ``--manifest-sha256 HEX`` gives it by hand), and the manifest's record of each section
(parameters, fingerprint) with the executed notebooks of the book, so an edited value or parameter, a missing or
an added file, or an archive of another build fails. It judges the files, not the zip they came in: an archive
unpacked and zipped again (``zip -r``: folder entries, other times, attributes, order and compression) verifies
the same. It reads the archive as it would be unpacked (:mod:`inkground_lib.core.archive`): a name that would
leave its folder, a link, a duplicated name, a size the manifest does not state are refused before anything is
read, and each member is streamed (bounded memory). :func:`archive_manifest` gives a command that unpacks the
archive (``restore``) the same checks: ``with open_archive(p) as a: extract(a, archive_manifest(a)[1], dest)``.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from inkground_lib.core.archive import Archive, ArchiveError, Expected, check, open_archive, read_member
from inkground_lib.core.files import atomic_write_bytes
from inkground_lib.core.folders import RUN_MARK
from inkground_lib.core.layout import PAPER_DIR, ROOT, SECTIONS_DIR

ARCHIVE_NAME = "inkground-results.zip"
MANIFEST = "MANIFEST.json"
SUFFIXES = (".csv", ".json", ".jsonl")
"""The run files an archive holds: tables, summaries, manifests and inks, and the append-only logs (each system's
predictions, the derenderers' and OCR's records, traces, truth comparisons), so a section reruns from them without
asking a model or an OCR engine again; and each run folder's mark (core.folders.RUN_MARK: the folder is a run
folder, so a section may write into it again, and make book's hash of the earlier sections' outputs holds it).
Not held: page images (the datasets are made again by their builders), model weights, locks and other hidden
files."""
ARCHIVE_CAP = 100 * 2**20
"""The stated cap of the results archive (100 MiB): :func:`pack` refuses to write a bigger one, and ``inkground
restore`` downloads and reads no more."""
CITATIONS = ("CITATION.cff", "citation.bib")
"""The companion's citation, beside the manifest in every archive (not listed in it: read with a size cap)."""
MANIFEST_MAX_BYTES = 16 * 2**20
"""Largest MANIFEST.json read (16 MiB): ~250 bytes a file, so ~0.1 MB for the book's ~220 files and ~0.8 MB at the
paper's scale (~3,100 files)."""
CITATION_MAX_BYTES = 2**20
"""Largest citation file read (1 MiB; the companion's are ~2 kB)."""

MANIFEST_SCHEMA = {
    "type": "object", "required": ["files", "sections"],
    "properties": {
        "files": {"type": "array", "items": {
            "type": "object", "required": ["path", "sha256", "bytes"],
            "properties": {"path": {"type": "string", "minLength": 1},
                           "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$",
                                      "description": "a sha256: 64 lowercase hex digits"},
                           "bytes": {"type": "integer", "minimum": 0},
                           "made_by": {"type": "array"}}}},
        "sections": {"type": "array", "items": {
            "type": "object", "required": ["section", "parameters", "fingerprint"],
            "properties": {"section": {"type": "string", "minLength": 1}, "parameters": {"type": "object"},
                           "fingerprint": {"type": ["string", "null"]}}}},
    },
}
"""What verify (and restore) read of a MANIFEST.json: the JSON Schema (draft 2020-12) of the fields they use."""


ANCHOR_PAGE = SECTIONS_DIR / "reviewers.md"
"""The book's page that prints the sha256 of the archive's MANIFEST.json (report.reviewers.archive_lines), under
its target ANCHOR_TARGET: what ``verify`` checks a manifest against when no digest is given."""
ANCHOR_TARGET = "(reviewers-archive)="
SHA256_LINE = re.compile(r"^[0-9a-f]{64}$")
"""A sha256 as the page prints it: 64 lowercase hex digits alone on a line."""


class ResultsError(ValueError):
    """The archive cannot be made, or does not verify."""


def section_parameters(executed: Path) -> dict:
    """All parameters an executed section ran with: its notebook's defaults (the parameters cell) overridden by
    those papermill injected."""
    from inkground_lib.publish.notebook_runner import find_section, notebook_parameters

    nb = json.loads(Path(executed).read_text("utf-8"))
    meta = nb.get("metadata", {})
    name = (meta.get("inkground") or {}).get("section") or Path(executed).stem
    params = {}
    try:
        for k, v in notebook_parameters(find_section(name[:2])).items():
            try:
                params[k] = ast.literal_eval(v) if v is not None else None
            except (ValueError, SyntaxError):
                params[k] = v
    except Exception:  # a section no longer in notebooks/: what papermill recorded is what there is
        pass
    params.update((meta.get("papermill") or {}).get("parameters") or {})
    return params


def named_folders(params: dict, root: Path = ROOT) -> list[tuple[str, Path]]:
    """(parameter, folder) for each parameter value that names an existing folder (relative paths from
    ``root``, where the sections run); lists of folders too."""
    out = []
    for k, v in params.items():
        for item in v if isinstance(v, list) else [v]:
            if isinstance(item, str) and item.strip():
                p = Path(item) if Path(item).is_absolute() else Path(root) / item
                if p.is_dir():
                    out.append((k, p.resolve()))
    return out


def _arcname(path: Path, root: Path) -> str:
    path = path.resolve()
    try:
        return path.relative_to(Path(root).resolve()).as_posix()
    except ValueError:  # a folder outside the repository (a test's): under external/, by its own path
        return "external/" + path.as_posix().lstrip("/")


def collect(executed: list[Path], root: Path = ROOT) -> tuple[dict[str, Path], dict]:
    """{name in the archive: file} and the manifest (without the files' hashes) for the executed sections."""
    files: dict[str, Path] = {}
    made_by: dict[str, list[dict]] = {}
    sections = []
    for nb_path in sorted(executed):
        nb = json.loads(Path(nb_path).read_text("utf-8"))
        record = nb.get("metadata", {}).get("inkground") or {}
        params = section_parameters(nb_path)
        name = record.get("section") or Path(nb_path).stem
        sections.append({"section": name, "parameters": params, "fingerprint": record.get("fingerprint"),
                         "inputs": record.get("inputs", {})})
        arc = _arcname(Path(nb_path), root)  # the executed notebook: the section's page, with its fingerprint
        files[arc] = Path(nb_path)
        made_by[arc] = [{"section": name, "parameter": None, "what": "the executed notebook"}]
        for param, folder in named_folders(params, root):
            for f in sorted(folder.rglob("*")):
                if f.is_file() and f.suffix in SUFFIXES and (f.name == RUN_MARK or not any(
                        part.startswith(".") for part in f.relative_to(folder).parts)):
                    arc = _arcname(f, root)
                    files[arc] = f
                    made_by.setdefault(arc, [])
                    if not any(m["section"] == name and m["parameter"] == param for m in made_by[arc]):
                        made_by[arc].append({"section": name, "parameter": param})
    for f in sorted(PAPER_DIR.glob("*")):
        if f.is_file() and f.suffix in SUFFIXES:
            arc = _arcname(f, root)
            files[arc] = f
            made_by[arc] = [{"section": None, "parameter": None, "what": "the paper's reported numbers"}]
    manifest = {"what": "the run files behind the numbers of the inkground book, with the parameters of each "
                        "section; verify with: python -m inkground_lib.publish.results verify <this archive>",
                "sections": sections,
                "files": [{"path": arc, "made_by": made_by[arc]} for arc in sorted(files)]}
    return files, manifest


def pack(out: Path, executed: list[Path] | None = None, root: Path = ROOT) -> dict:
    """Write the archive to ``out``; returns its manifest. Deterministic: the same files give the same bytes."""
    contents = archive_contents(executed, root)
    write_archive(out, contents)
    return contents.manifest


@dataclass
class ArchiveContents:
    """What an archive holds before it is written: {name in the archive: file}, the manifest (every file with its
    size and sha256) and the manifest as it is stored (``listing``, the bytes whose sha256 the reviewers' page
    prints)."""

    files: dict[str, Path]
    manifest: dict
    listing: bytes

    def digest(self) -> tuple[str, int]:
        """(sha256 of the stored manifest, how many files it lists): what the reviewers' page prints."""
        return hashlib.sha256(self.listing).hexdigest(), len(self.manifest["files"])


def archive_contents(executed: list[Path] | None = None, root: Path = ROOT) -> ArchiveContents:
    """The archive of the executed sections ``executed`` (default: every executed section of the book), read
    and hashed but not written (:func:`write_archive` writes it)."""
    executed = list(executed) if executed is not None else sorted(SECTIONS_DIR.glob("[0-9][0-9]_*.ipynb"))
    executed = [p for p in executed if not p.name.endswith((".failed.ipynb",)) and not p.name.startswith(".")]
    if not executed:
        raise ResultsError(f"no executed section under {SECTIONS_DIR}: build the book first (make book)")
    files, manifest = collect(executed, root)
    for entry in manifest["files"]:
        data = files[entry["path"]].read_bytes()
        entry["sha256"], entry["bytes"] = hashlib.sha256(data).hexdigest(), len(data)
    listing = json.dumps(manifest, indent=1, sort_keys=True, default=str).encode()
    return ArchiveContents(files, manifest, listing)


def write_archive(out: Path, contents: ArchiveContents) -> None:
    """Write the archive ``contents`` to ``out`` (atomically; nothing when the archive there holds the same files
    already): deflated, every member dated 2026-01-01, so the same files give the same bytes. Refused, with the
    largest files named, over :data:`ARCHIVE_CAP`. Compressing is most of the time, and zlib lets other threads
    run meanwhile (``make book`` writes the archive beside the PDF)."""
    from inkground_lib.publish.citation import bibtex

    files, manifest, listing = contents.files, contents.manifest, contents.listing
    if _same_archive(Path(out), listing, bibtex(ROOT).encode()):
        return  # the same files: the archive there has these bytes already (pack is deterministic)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        def add(name: str, data: bytes):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
        add(MANIFEST, listing)
        add("CITATION.cff", (ROOT / "CITATION.cff").read_bytes())
        add("citation.bib", bibtex(ROOT).encode())
        for arc in sorted(files):
            add(arc, files[arc].read_bytes())
    if buf.tell() > ARCHIVE_CAP:
        biggest = ", ".join(f"{e['path']} ({e['bytes']:,} bytes)"
                            for e in sorted(manifest["files"], key=lambda e: -e["bytes"])[:3])
        raise ResultsError(f"{out}: the archive would be {buf.tell():,} bytes, more than its cap of {ARCHIVE_CAP:,} "
                           f"(the largest files: {biggest}); not written")
    atomic_write_bytes(Path(out), buf.getvalue())


def _same_archive(out: Path, listing: bytes, bib: bytes) -> bool:
    """Whether the archive at ``out`` holds the manifest ``listing`` (every file's sha256), this citation and
    nothing else: then it is the archive :func:`pack` would write, byte for byte."""
    try:
        with zipfile.ZipFile(out) as z:
            return (z.read(MANIFEST) == listing and z.read("citation.bib") == bib
                    and z.read("CITATION.cff") == (ROOT / "CITATION.cff").read_bytes()
                    and len(z.namelist()) == 3 + len(json.loads(listing)["files"]))
    except (OSError, KeyError, zipfile.BadZipFile, ValueError):
        return False


def archive_manifest(archive: Archive) -> tuple[dict, dict[str, Expected]]:
    """The manifest of an opened results archive and what it states of each member ({name: Expected}: every
    listed file's size and sha256, the manifest's own bytes, the citation files' sizes under
    CITATION_MAX_BYTES). Raises ResultsError, one line naming the archive and what is wrong, when there is no
    manifest or it is too big, not JSON, or not of :data:`MANIFEST_SCHEMA` (a missing field, a wrong type, a
    file listed twice)."""
    from inkground_lib.core.manifest_schema import fault_text, json_validator, sorted_faults

    where = f"{archive.path}: {MANIFEST}"
    if MANIFEST not in archive.files:
        inside = sorted(n for n in archive.files if n.endswith("/" + MANIFEST))
        if inside:  # the folder it was unpacked into zipped with it (zip -r new.zip folder/)
            folder = inside[0][:-len(MANIFEST)]
            raise ResultsError(f"{archive.path}: no {MANIFEST} at its top, but {inside[0]}: the archive holds the "
                               f"folder it was unpacked into; zip that folder's contents (cd {folder} && zip -r "
                               f"../again.zip .)")
        raise ResultsError(f"{archive.path}: no {MANIFEST}")
    try:
        raw = read_member(archive, MANIFEST, MANIFEST_MAX_BYTES)
        manifest = json.loads(raw)
    except ArchiveError as e:
        raise ResultsError(str(e)) from None
    except ValueError as e:  # UnicodeDecodeError too
        raise ResultsError(f"{where}: not JSON ({str(e).splitlines()[0][:120]})") from None
    errors = sorted_faults(json_validator(MANIFEST_SCHEMA), manifest)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ResultsError(f"{where}: {fault_text(errors[0])}{more}")
    expected = {MANIFEST: Expected(len(raw), hashlib.sha256(raw).hexdigest())}
    for i, entry in enumerate(manifest["files"]):
        if entry["path"] in expected:
            raise ResultsError(f"{where}: field files[{i}].path: {entry['path']!r} is listed twice")
        expected[entry["path"]] = Expected(entry["bytes"], entry["sha256"])
    for name in CITATIONS:
        info = archive.files.get(name)
        if info is not None and name not in expected:
            if info.file_size > CITATION_MAX_BYTES:
                raise ResultsError(f"{archive.path}: {name}: {info.file_size:,} bytes, more than a citation's "
                                   f"{CITATION_MAX_BYTES:,}; not read")
            expected[name] = Expected(info.file_size)  # checked whole (CRC), not against a hash
    return manifest, expected


def _comparable(params: dict) -> dict:
    """Parameters as the manifest holds them (through JSON, other types as text), to compare."""
    return json.loads(json.dumps(params, sort_keys=True, default=str))


def _shown(value) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def section_problems(manifest: dict, executed: list[Path]) -> list[str]:
    """Each section of the book (``executed``: its executed notebooks) missing from the manifest, recorded there
    with another fingerprint, or with another value of any parameter (as :func:`section_parameters` reads
    them: the notebook's defaults with papermill's values), one line each."""
    problems = []
    recorded = {s["section"]: s for s in manifest.get("sections", [])}
    for nb_path in executed:
        if nb_path.name.endswith(".failed.ipynb"):
            continue
        record = json.loads(Path(nb_path).read_text("utf-8")).get("metadata", {}).get("inkground") or {}
        name = record.get("section") or nb_path.stem
        got = recorded.get(name)
        if got is None:
            problems.append(f"section {name}: in the book, not in the archive")
            continue
        if got.get("fingerprint") != record.get("fingerprint"):
            problems.append(f"section {name}: the archive is of another run (fingerprint differs)")
        book, archived = _comparable(section_parameters(nb_path)), got.get("parameters") or {}
        for key in sorted(set(book) | set(archived)):
            if key not in archived:
                problems.append(f"section {name}: parameter {key}: {_shown(book[key])} in the book, not in the "
                                "archive")
            elif key not in book:
                problems.append(f"section {name}: parameter {key}: {_shown(archived[key])} in the archive, not "
                                "in the book")
            elif book[key] != archived[key]:
                problems.append(f"section {name}: parameter {key}: {_shown(archived[key])} in the archive, "
                                f"{_shown(book[key])} in the book")
    return problems


def printed_anchor(page: Path | None = None) -> str | None:
    """The manifest sha256 the book's reviewers' page prints: the first line of 64 hex digits after its target
    ANCHOR_TARGET (``page``, default ANCHOR_PAGE); None when there is no such page or digest (a book built
    without an archive).

    >>> import tempfile; p = Path(tempfile.mkdtemp()) / "r.md"
    >>> _ = p.write_text("(reviewers-archive)=\\n## Check\\n```text\\n" + "ab" * 32 + "\\n```\\n")
    >>> printed_anchor(p) == "ab" * 32, printed_anchor(p.with_name("none.md"))
    (True, None)
    """
    try:
        text = Path(ANCHOR_PAGE if page is None else page).read_text("utf-8")
    except OSError:
        return None
    start = text.find(ANCHOR_TARGET)
    if start < 0:
        return None
    return next((ln.strip() for ln in text[start:].splitlines() if SHA256_LINE.match(ln.strip())), None)


def verify(archive: Path, executed: list[Path] | None = None, max_bytes: int | None = None,
           anchor: str | None = None) -> list[str]:
    """What does not hold in ``archive`` ([] when it verifies), one line each: a member unsafe to unpack (then
    nothing else is read), the manifest's sha256 against ``anchor`` (the digest the book prints; None: not
    checked), each file's size and sha256 against the manifest (streamed), no file missing or unlisted, and each
    section's parameters and fingerprint against the executed notebooks (``executed``, default the book's; []
    skips that part). Only the files count, not how they were zipped: folder entries, times, attributes, order
    and compression are not compared. Raises ResultsError (one line) when the archive cannot be read, is over
    its read limit (``max_bytes``, see core.archive), or its manifest is missing or malformed."""
    try:
        with open_archive(archive, max_bytes) as a:
            if a.problems:
                return list(a.problems)
            manifest, expected = archive_manifest(a)
            problems = check(a, expected)
    except ArchiveError as e:
        raise ResultsError(str(e)) from None
    digest = expected[MANIFEST].sha256
    if anchor is not None and digest != anchor.strip().lower():
        problems.insert(0, f"{MANIFEST}: sha256 {digest}, the book prints {anchor.strip().lower()}: the manifest "
                           "is not the book's (edited, or of another build)")
    executed = sorted(SECTIONS_DIR.glob("[0-9][0-9]_*.ipynb")) if executed is None else executed
    return problems + section_problems(manifest, executed)


RESTORED_PREFIXES = ("book/sections/", "data/runs/")
"""The members ``inkground restore`` puts back (publish.restore.RESTORED); the others are the checkout's own (the
paper's numbers) or made again by the dataset builders."""


def _member_group(path: str) -> tuple[str, str]:
    parts = path.split("/")
    depth = 4 if parts[:2] == ["data", "runs"] else 3 if parts[:2] == ["data", "datasets"] else 2
    folder = "/".join(parts[:min(depth, len(parts) - 1)]) + "/"
    kind = ("predictions (JSONL)" if "/predictions/" in path else
            {".ipynb": "executed notebooks", ".jsonl": "logs (JSONL)", ".csv": "tables (CSV)"}.get(
                Path(path).suffix, "JSON"))
    return folder, kind


def members_table(manifest: dict, archive_bytes: int | None = None) -> str:
    """A Markdown table of what an archive's ``manifest`` lists, by folder and kind: files, unpacked MiB and
    whether ``inkground restore`` puts them back; a last row with the totals (and the archive's own size).

    >>> print(members_table({"files": [{"path": "data/runs/s/03_evaluation/predictions/a.jsonl", "bytes": 2**20},
    ...                                {"path": "data/paper/reported.csv", "bytes": 2**19}]}, 2**19))
    | Folder | Kind | Files | MiB | Restored |
    |---|---|--:|--:|---|
    | `data/runs/s/03_evaluation/` | predictions (JSONL) | 1 | 1.0 | yes |
    | `data/paper/` | tables (CSV) | 1 | 0.5 | no |
    | all | | 2 | 1.5 | 0.5 MiB of zip |
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for f in manifest["files"]:
        g = groups.setdefault(_member_group(f["path"]), [0, 0])
        g[0] += 1
        g[1] += int(f["bytes"])
    rows = ["| Folder | Kind | Files | MiB | Restored |", "|---|---|--:|--:|---|"]
    for (folder, kind), (n, size) in groups.items():
        restored = "yes" if folder.startswith(RESTORED_PREFIXES) else "no"
        rows.append(f"| `{folder}` | {kind} | {n} | {size / 2**20:.1f} | {restored} |")
    total = sum(size for _, size in groups.values())
    zipped = f"{archive_bytes / 2**20:.1f} MiB of zip" if archive_bytes is not None else ""
    rows.append(f"| all | | {sum(n for n, _ in groups.values())} | {total / 2**20:.1f} | {zipped} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    anchor = None
    if len(argv) == 4 and argv[0] == "verify" and argv[2] == "--manifest-sha256":
        anchor, argv = argv[3], argv[:2]
        if not SHA256_LINE.match(anchor.strip().lower()):
            print(f"results: --manifest-sha256 {anchor!r}: not a sha256 (64 hex digits)", file=sys.stderr)
            return 2
    if len(argv) != 2 or argv[0] not in ("pack", "verify", "members"):
        print(__doc__, file=sys.stderr)
        return 2
    what, path = argv[0], Path(argv[1])
    try:
        if what == "pack":
            m = pack(path)
            size = path.stat().st_size
            print(f"[inkground] results: {path} ({len(m['files'])} files of {len(m['sections'])} sections, "
                  f"{size / 1e6:.1f} MB)")
            return 0
        if what == "members":
            with open_archive(path) as a:
                manifest, _ = archive_manifest(a)
            print(members_table(manifest, path.stat().st_size))
            return 0
        source = "given" if anchor is not None else None
        if anchor is None:
            anchor = printed_anchor()
            source = f"printed in {ANCHOR_PAGE.relative_to(ROOT) if ANCHOR_PAGE.is_relative_to(ROOT) else ANCHOR_PAGE}"
        problems = verify(path, anchor=anchor)
    except (ResultsError, OSError, ValueError) as e:
        print(f"results: {e}", file=sys.stderr)
        return 1
    for p in problems:
        print(p)
    if anchor is None:
        print(f"{path}: its {MANIFEST} was not checked against a printed digest (no {ANCHOR_PAGE.name} in this "
              "checkout): compare its sha256 with the one the book's reviewers' page prints, or pass "
              "--manifest-sha256 HEX")
    else:
        print(f"{path}: {MANIFEST} checked against the digest {source} ({anchor.strip().lower()[:12]}...)")
    print(f"{path}: {'verifies' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
