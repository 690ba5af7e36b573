"""The results a reviewer checks, in one archive: every CSV and JSON file of the run and dataset folders the
book's executed sections read or wrote (the folders their parameters name), the paper's reported numbers
(data/paper/), and a manifest saying of each file its sha256, its size and which section made or read it with
which parameters; with the companion's citation (CITATION.cff and BibTeX).

    python -m inkground_lib.publish.results pack _build/html/inkground-results.zip
    python -m inkground_lib.publish.results verify _build/html/inkground-results.zip

``verify`` recomputes each file's sha256 from the archive and compares it with the manifest, and the
manifest's record of each section (parameters, fingerprint) with the executed notebooks of the book, so an
edited value, a missing or an added file, or an archive of another build fails.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import sys
import zipfile
from pathlib import Path

from inkground_lib.core.files import atomic_write_bytes
from inkground_lib.core.layout import PAPER_DIR, ROOT, SECTIONS_DIR

ARCHIVE_NAME = "inkground-results.zip"
MANIFEST = "MANIFEST.json"
SUFFIXES = (".csv", ".json")


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
        for param, folder in named_folders(params, root):
            for f in sorted(folder.rglob("*")):
                if f.is_file() and f.suffix in SUFFIXES and not any(part.startswith(".")
                                                                    for part in f.relative_to(folder).parts):
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
    from inkground_lib.publish.citation import bibtex

    executed = list(executed) if executed is not None else sorted(SECTIONS_DIR.glob("[0-9][0-9]_*.ipynb"))
    executed = [p for p in executed if not p.name.endswith((".failed.ipynb",)) and not p.name.startswith(".")]
    if not executed:
        raise ResultsError(f"no executed section under {SECTIONS_DIR}: build the book first (make book)")
    files, manifest = collect(executed, root)
    for entry in manifest["files"]:
        data = files[entry["path"]].read_bytes()
        entry["sha256"], entry["bytes"] = hashlib.sha256(data).hexdigest(), len(data)
    listing = json.dumps(manifest, indent=1, sort_keys=True, default=str).encode()
    if _same_archive(Path(out), listing, bibtex(ROOT).encode()):
        return manifest  # the same files: the archive there has these bytes already (pack is deterministic)
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
    atomic_write_bytes(Path(out), buf.getvalue())
    return manifest


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


def verify(archive: Path, executed: list[Path] | None = None) -> list[str]:
    """What does not hold in ``archive`` ([] when it verifies): each file's sha256 against the manifest, no file
    missing or unlisted, and each section's parameters and fingerprint against the executed notebooks
    (``executed``, default the book's; [] skips that part)."""
    problems = []
    with zipfile.ZipFile(archive) as z:
        names = set(z.namelist())
        try:
            manifest = json.loads(z.read(MANIFEST))
        except KeyError:
            return [f"{archive}: no {MANIFEST}"]
        listed = {e["path"] for e in manifest["files"]}
        for e in manifest["files"]:
            if e["path"] not in names:
                problems.append(f"{e['path']}: listed in the manifest, not in the archive")
                continue
            digest = hashlib.sha256(z.read(e["path"])).hexdigest()
            if digest != e["sha256"]:
                problems.append(f"{e['path']}: sha256 {digest[:12]}, the manifest says {e['sha256'][:12]}")
        for extra in sorted(names - listed - {MANIFEST, "CITATION.cff", "citation.bib"}):
            problems.append(f"{extra}: in the archive, not in the manifest")
    executed = sorted(SECTIONS_DIR.glob("[0-9][0-9]_*.ipynb")) if executed is None else executed
    recorded = {s["section"]: s for s in manifest.get("sections", [])}
    for nb_path in executed:
        if nb_path.name.endswith(".failed.ipynb"):
            continue
        record = json.loads(Path(nb_path).read_text("utf-8")).get("metadata", {}).get("inkground") or {}
        name = record.get("section") or nb_path.stem
        got = recorded.get(name)
        if got is None:
            problems.append(f"section {name}: in the book, not in the archive")
        elif got.get("fingerprint") != record.get("fingerprint"):
            problems.append(f"section {name}: the archive is of another run (fingerprint differs)")
    return problems


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] not in ("pack", "verify"):
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
        problems = verify(path)
    except (ResultsError, OSError, zipfile.BadZipFile) as e:
        print(f"results: {e}", file=sys.stderr)
        return 1
    for p in problems:
        print(p)
    print(f"{path}: {'verifies' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
