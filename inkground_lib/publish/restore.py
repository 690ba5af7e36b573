"""Starting from the published results: the book's results archive (``inkground-results.zip``, a download of every
page, :mod:`inkground_lib.publish.results`) turned back into the book's runs, so that ``make book`` executes no
section whose code and inputs are unchanged and ``inkground run 04 -p n_boot 500`` starts from the book's runs.

    inkground restore FILE|URL         a local archive, or an https address (the book's own download link)
    inkground restore --published      the archive of the book published for this repository (CITATION.cff's
                                       repository-code -> its GitHub Pages address)

Nothing is written unless every member of the archive checks: the archive is read with the safe reader
(:mod:`inkground_lib.core.archive`: member names, kinds, counts and sizes) and every file's size and sha256 are
compared with its MANIFEST.json, file by file (the zip's own metadata - dates, compression, order - is never
compared, so a re-zipped archive restores the same); a tampered file is refused, named. Then the executed
notebooks go to ``book/sections/`` and the run files to ``data/runs/``; a file here that differs from the
archive's is never replaced without ``--force`` (nothing is written then, and the files are named). The page
images are not in the archive (the cap, :data:`ARCHIVE_CAP`): the datasets are made again here by their
builders (deterministic; their code digest is in their meta) and the benchmark set's photos are linked from
the candidate pages they were linked from, once the candidates' hash equals the one the benchmark records.
Finally each section is checked as ``make book`` would check it (its fingerprint) and the command says which
sections would execute, and why.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import socket
import sys
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from inkground_lib.core.layout import ROOT
from inkground_lib.publish.results import ARCHIVE_CAP, RESTORED_PREFIXES

RESTORED = RESTORED_PREFIXES
"""Where members of the archive are restored to. Its other members are not: the paper's numbers and the citation
are the checkout's own, the datasets' manifests and inks are made again here with their page images by the
builders (whose code digest is in their meta), folders outside the repository are no book's runs."""

DOWNLOAD_TIMEOUT = 60.0
"""Seconds a download may stall before it is given up."""


class RestoreError(ValueError):
    """The archive cannot be had, is refused, or would replace files here; one line, naming what."""


# ------------------------------------------------------------------------------------------------ the archive

def _loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return all(ipaddress.ip_address(info[4][0]).is_loopback
                   for info in socket.getaddrinfo(host, None))
    except (OSError, ValueError):
        return False


def _allowed(url: str, allow_http_loopback: bool) -> bool:
    u = urlsplit(url)
    return u.scheme == "https" or (u.scheme == "http" and allow_http_loopback and _loopback(u.hostname))


def fetch(source: str, into: Path, *, allow_http_loopback: bool = False, max_bytes: int = ARCHIVE_CAP) -> Path:
    """The archive ``source`` as a local file of at most ``max_bytes`` (the archive's cap): a path as it is; an
    ``https://`` address downloaded into ``into`` (redirects only to https). A plain ``http://`` address is read
    only with ``allow_http_loopback`` and only from this machine (a test's server)."""
    if "://" not in source:
        path = Path(source)
        if not path.is_file():
            raise RestoreError(f"{source}: no such file")
        if path.stat().st_size > max_bytes:
            raise RestoreError(f"{source}: {path.stat().st_size:,} bytes, more than the {max_bytes:,} bytes allowed; "
                               "not read")
        return path
    if not _allowed(source, allow_http_loopback):
        raise RestoreError(f"{source}: only an https address (or a local file) is read")
    out = Path(into) / "inkground-results.zip"
    try:
        with urllib.request.urlopen(urllib.request.Request(source, headers={"User-Agent": "inkground-restore"}),
                                    timeout=DOWNLOAD_TIMEOUT) as resp:
            if not _allowed(resp.geturl(), allow_http_loopback):
                raise RestoreError(f"{source}: redirected to {resp.geturl()}, not an https address")
            length = resp.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > max_bytes:
                raise RestoreError(f"{source}: {int(length):,} bytes, more than the {max_bytes:,} bytes allowed; "
                                   "not downloaded")
            n = 0
            with open(out, "wb") as f:
                while chunk := resp.read(1 << 20):
                    n += len(chunk)
                    if n > max_bytes:
                        raise RestoreError(f"{source}: more than the {max_bytes:,} bytes allowed; download stopped")
                    f.write(chunk)
    except urllib.error.HTTPError as e:
        raise RestoreError(f"{source}: HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError, TimeoutError) as e:
        raise RestoreError(f"{source}: cannot be downloaded ({getattr(e, 'reason', e)})") from None
    return out


def published_url(root: Path = ROOT) -> str:
    """The address of the results archive of the book published for this repository: its GitHub Pages site
    (:func:`~inkground_lib.publish.citation.pages_address` of CITATION.cff's repository-code) and the archive's
    name."""
    from inkground_lib.publish.citation import pages_address, repository
    from inkground_lib.publish.results import ARCHIVE_NAME

    url = repository(root)
    site = pages_address(url)
    if site is None:
        named = "no repository-code" if url is None else f"{url}, not a GitHub repository"
        raise RestoreError(f"CITATION.cff names {named}: no published book to restore from; give the archive's "
                           "file or address")
    return site + ARCHIVE_NAME


# ---------------------------------------------------------------------------------------------- the restore

@dataclass
class Restored:
    """What :func:`restore` did: the files written and kept (already equal), the members not restored (outside
    :data:`RESTORED`), the benchmark photos linked, and for each section whether ``make book`` would execute it
    (``reruns``: section -> why; empty when none would)."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    linked: int = 0
    reruns: dict[str, str] = field(default_factory=dict)
    sections: list[str] = field(default_factory=list)


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def restore(source: str, root: Path = ROOT, *, force: bool = False, allow_http_loopback: bool = False,
            datasets: bool = True, max_bytes: int = ARCHIVE_CAP) -> Restored:
    """Restore the book's runs from the results archive ``source`` (a path or an https address) into the
    repository at ``root``; see the module doc. ``max_bytes`` bounds the archive's file (downloaded or local: its
    cap, :data:`ARCHIVE_CAP`); what its members unpack to is bounded by the safe reader's own limit
    (:func:`~inkground_lib.core.archive.open_archive`: 2 GiB, ``INKGROUND_MAX_ARCHIVE_MB``), as the archive is
    compressed (the book's: 75 MiB of zip, 202 MiB unpacked). ``datasets``: make the datasets again, link the
    benchmark photos and say what make book would execute (in this repository only: ``root`` is ROOT). Raises
    RestoreError (one line) when the archive cannot be had, a member does not check (nothing is written then), or
    files here differ from the archive's and not ``force``."""
    from inkground_lib.core.archive import ArchiveError, extract, open_archive
    from inkground_lib.publish.results import ResultsError, archive_manifest

    root = Path(root)
    out = Restored()
    with tempfile.TemporaryDirectory(prefix=".inkground-restore-", dir=root) as tmp:
        path = fetch(source, Path(tmp), allow_http_loopback=allow_http_loopback, max_bytes=max_bytes)
        staging = Path(tmp) / "files"
        try:
            with open_archive(path) as archive:
                if archive.problems:
                    raise RestoreError(f"{source}: refused, nothing written: {archive.problems[0]}")
                manifest, expected = archive_manifest(archive)
                extract(archive, expected, staging)  # every member checked before any is written
        except (ArchiveError, ResultsError) as e:
            raise RestoreError(f"{source}: refused, nothing written: {str(e).removeprefix(f'{path}: ')}") from None
        members = sorted(e["path"] for e in manifest["files"])
        take = [m for m in members if m.startswith(RESTORED)]
        out.skipped = [m for m in members if not m.startswith(RESTORED)]
        differ = []
        for m in take:
            here = root / m
            if here.is_file() and _sha256(here) == expected[m].sha256:
                out.unchanged.append(m)
            elif here.exists() or here.is_symlink():
                differ.append(m)
        if differ and not force:
            raise RestoreError(f"{len(differ)} file(s) here differ from the archive's (first: {differ[0]}); nothing "
                               "written: --force replaces them (or move them away first)")
        for m in take:
            if m in out.unchanged:
                continue
            target = root / m
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / m, target)
            out.written.append(m)
    out.sections = [s["section"] for s in manifest.get("sections", [])]
    if datasets and root.resolve() == ROOT.resolve():  # the builders and make book work in this repository
        made = _datasets()
        out.linked = link_benchmark_photos(root)
        out.reruns = would_execute(made)
    return out


def _datasets() -> dict[str, Path]:
    from inkground_lib.publish.make_book import ensure_datasets

    return ensure_datasets(progress=False)


def link_benchmark_photos(root: Path = ROOT) -> int:
    """Hard-link (or copy) each missing page photo of every benchmark set under ``root``/data/runs from its
    candidate dataset, as section 02 linked it, when the candidates' :func:`dataset_hash` is the one the
    benchmark records (the same pages); returns the number of photos linked."""
    from inkground_lib.core.dataset import dataset_hash
    from inkground_lib.core.repo_paths import repo_path
    from inkground_lib.pseudo.benchmark import _link_or_copy

    n = 0
    for mpath in sorted((Path(root) / "data" / "runs").rglob("manifest.json")):
        try:
            m = json.loads(mpath.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        cand = (m.get("meta") or {}).get("candidates") if isinstance(m, dict) else None
        if m.get("kind") != "benchmark" or not isinstance(cand, dict):
            continue
        missing = [p["image"] for p in m.get("pages", []) if not (mpath.parent / p["image"]).exists()]
        if not missing:
            continue
        src = repo_path(cand.get("path", ""))
        if not (src / "manifest.json").is_file() or dataset_hash(src) != cand.get("hash"):
            raise RestoreError(f"{mpath.parent}: its page photos are linked from {src}, which is not the dataset it "
                               f"was made from (its hash differs from the recorded {str(cand.get('hash'))[:12]})")
        for image in missing:
            _link_or_copy(src / image, mpath.parent / image)
            n += 1
    return n


def would_execute(datasets: dict[str, Path]) -> dict[str, str]:
    """{section: why} for each section ``make book`` would execute now (its fingerprint, computed from the
    same inputs make book gives it, differs from the one its executed notebook records); empty when none."""
    from inkground_lib.publish import make_book as mb
    from inkground_lib.publish import notebook_runner as nr

    info = mb.datasets_info(datasets)
    out = {}
    for s in nr.sections():
        target = s.executed()
        if not target.is_file():
            out[s.key] = f"no executed notebook {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}"
            continue
        params = mb.fit_to_available_data(s, mb.section_parameters(s, False), datasets)
        inputs = {**mb.section_inputs(s.key, info), **nr.input_file_hashes(params)}
        if nr.fingerprint(s, params, inputs) != nr.stored_fingerprint(target):
            recorded = (json.loads(target.read_text("utf-8")).get("metadata", {}).get("inkground") or {})
            changed = sorted(k for k in set(inputs) | set(recorded.get("inputs") or {})
                             if inputs.get(k) != (recorded.get("inputs") or {}).get(k))
            out[s.key] = (f"its inputs differ here: {', '.join(changed)}" if changed else
                          "its code, notebook or parameters differ from the archive's")
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m inkground_lib.publish.restore FILE|URL`` (the command is ``inkground restore``)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        r = restore(argv[0])
    except RestoreError as e:
        print(f"restore: {e}", file=sys.stderr)
        return 1
    print(report(r))
    return 0


def report(r: Restored) -> str:
    """The lines ``inkground restore`` prints."""
    lines = [f"restored {len(r.written)} files ({len(r.unchanged)} already equal) of {len(r.sections)} sections; "
             f"{r.linked} benchmark photos linked"]
    if r.reruns:
        lines += [f"make book would execute section {k}: {why}" for k, why in sorted(r.reruns.items())]
    else:
        lines.append("make book executes no section: every section's code and inputs are the archive's")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
