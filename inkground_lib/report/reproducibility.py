"""The generated reproducibility page: the build, each section's parameters, run time and the run outputs it read
and wrote (from the executed notebooks' own records), the datasets and the software."""

from __future__ import annotations

import ast
import json
import os
import platform
import re
import subprocess
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from inkground_lib.core.files import atomic_write_text
from inkground_lib.core.layout import ROOT, SECTIONS_DIR
from inkground_lib.core.parameter_values import changed_parameters
from inkground_lib.core.rerun_folders import RERUN_LABEL
from inkground_lib.core.run_files import RUN_PATTERNS
from inkground_lib.report.escape import md_code, md_escape

KEY_PACKAGES = ["numpy", "scipy", "pandas", "matplotlib", "numba", "scikit-image", "opencv-python-headless",
                "rapidfuzz", "rapidocr", "onnxruntime", "torch", "transformers", "safetensors", "papermill",
                "jupyter-book", "myst-nb", "Hershey-Fonts", "openai", "anthropic"]


def package_versions(names=KEY_PACKAGES) -> dict:
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = "not installed"
    return out


def git_state(root: Path = ROOT) -> str:
    """The commit the book was built from: its short hash, with "uncommitted changes" when tracked or
    untracked (not ignored) files differ from it; an em dash with the reason when git cannot tell."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)

    try:
        head = git("rev-parse", "--short", "HEAD")
        if head.returncode != 0:
            return "\u2014 (not a git checkout)"
        dirty = git("status", "--porcelain")
    except (OSError, subprocess.SubprocessError):
        return "\u2014 (git is not available)"
    h = f"`{head.stdout.strip()}`"
    return h + (" with uncommitted changes" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def build_time(now: datetime | None = None) -> str:
    """The build date and time in UTC; ``SOURCE_DATE_EPOCH`` (the reproducible-builds convention) fixes it."""
    if now is None:
        epoch = os.environ.get("SOURCE_DATE_EPOCH")
        now = (datetime.fromtimestamp(int(epoch), timezone.utc) if epoch and epoch.isdigit()
               else datetime.now(timezone.utc))
    return now.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def run_time(seconds) -> str:
    """A papermill duration as seconds (and minutes from one minute on); an em dash when none is recorded."""
    try:
        s = float(seconds)
    except (TypeError, ValueError):
        return "\u2014 (not recorded)"
    return f"{s:.1f} s" if s < 60 else f"{s:.0f} s ({s / 60:.1f} min)"


SECTION_IO = {
    "01_dataset_statistics": (("dataset", "recorded"), ()),
    "02_pseudo_labels": (("candidates", "ratings"), ("run_dir",)),
    "03_model_evaluation": (("benchmark", "recorded"), ("bench_run", "recorded_run")),
    "04_tradeoffs": (("eval_runs", "datasets"), ()),
}
"""Per section notebook: the parameters naming what it reads and what it writes (folders or files, relative to
the repository root). Section 03 also reads back its own prediction caches (a rerun never asks twice)."""

SECTION_READS = {"04_tradeoffs": ("predictions/*.jsonl", "scores-*.csv", "facts-*.json")}
"""The files a section reads in a run folder another section wrote, where it reads only some of them (glob
patterns relative to the folder; section 04 re-scores the cached predictions and reads the scores and facts)."""


def executed_notebooks(root: Path = ROOT) -> list[Path]:
    """The executed section notebooks of a build (``book/sections/NN_*.ipynb`` under ``root``), in order."""
    return sorted((Path(root) / SECTIONS_DIR.relative_to(ROOT)).glob("[0-9][0-9]_*.ipynb"))


def notebook_values(nb: dict) -> dict:
    """The parameter values an executed notebook ran with: the literal assignments of its ``parameters`` cell,
    overridden by papermill's ``injected-parameters`` cell and its recorded parameters."""
    out = {}
    for tag in ("parameters", "injected-parameters"):
        for cell in nb.get("cells", []):
            if tag not in (cell.get("metadata", {}).get("tags") or []):
                continue
            src = cell.get("source", "")
            try:
                body = ast.parse(src if isinstance(src, str) else "".join(src)).body
            except SyntaxError:
                continue
            for node in body:
                target = node.targets[0] if isinstance(node, ast.Assign) else (
                    node.target if isinstance(node, ast.AnnAssign) else None)
                if isinstance(target, ast.Name) and node.value is not None:
                    try:
                        out[target.id] = ast.literal_eval(node.value)
                    except ValueError:
                        pass
    out.update(nb.get("metadata", {}).get("papermill", {}).get("parameters") or {})
    return out


def _paths(values: dict, names) -> list[str]:
    out = []
    for n in names:
        v = values.get(n)
        for x in (v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(x, str) and x and x not in out:
                out.append(x)
    return out


def run_outputs(path: str, root: Path = ROOT, patterns=RUN_PATTERNS) -> str:
    """What a folder of the build holds, for the page: a run folder's files (the names section 02 or 03
    writes, :data:`inkground_lib.core.run_files.RUN_PATTERNS`, or those of ``patterns``; a folder of them as
    "name/ with N files"), a dataset folder as "a dataset folder", a file as "file"; "not found" where nothing is
    there."""
    p = Path(path) if Path(path).is_absolute() else Path(root) / path
    if p.is_file():
        return "file"
    if not p.is_dir():
        return "not found"
    if (p / "manifest.json").is_file():
        return "a dataset folder"
    names = []
    for pat in patterns:
        top = pat.split("/", 1)[0]
        for q in sorted(p.glob(top)):
            if q.is_dir():
                n = sum(1 for f in q.rglob("*") if f.is_file())
                label = f"{q.name}/ with {n} file{'' if n == 1 else 's'}"
            else:
                label = q.name
            if label not in names:
                names.append(label)
    return ", ".join(names) or "empty"


def section_records(executed, root: Path = ROOT) -> list[dict]:
    """What each executed section notebook records about its run: section, the parameters papermill recorded
    (``params``) and all the values it ran with (``values``), run time in seconds (``duration``, None when not
    recorded), end time (UTC, "YYYY-MM-DD HH:MM" or None), fingerprint, and the paths it read and wrote
    (:data:`SECTION_IO`) with the file patterns it reads in them (``read_patterns``: :data:`SECTION_READS`).
    The reproducibility page and the front page's run time both come from here."""
    out = []
    for nb_path in executed:
        nb = json.loads(Path(nb_path).read_text("utf-8"))
        meta = nb.get("metadata", {})
        ig, pmm = meta.get("inkground", {}), meta.get("papermill", {})
        section = ig.get("section", Path(nb_path).stem)
        values = notebook_values(nb)
        reads, writes = SECTION_IO.get(section, ((), ()))
        try:
            duration = float(pmm.get("duration"))
        except (TypeError, ValueError):
            duration = None
        try:
            ended = datetime.fromisoformat(str(pmm.get("end_time") or "")).astimezone(timezone.utc).strftime(
                "%Y-%m-%d %H:%M")
        except ValueError:
            ended = None
        out.append({"section": section, "params": pmm.get("parameters") or {}, "values": values,
                    "duration": duration, "ended": ended, "fingerprint": ig.get("fingerprint", ""),
                    "reads": _paths(values, reads), "writes": _paths(values, writes),
                    "read_patterns": SECTION_READS.get(section, RUN_PATTERNS)})
    return out


def _parameter_text(name: str, value, defaults: dict) -> str:
    """A recorded parameter as the page shows it: ``name=value``, with the notebook's default (``defaults``: its
    section's, ``{}`` for a notebook that is not a section of this repository) where it differs."""
    if name in defaults and not changed_parameters({name: value}, defaults):
        return md_code(f"{name}={value!r}", table=True)
    if name not in defaults:
        default = ""
    elif defaults[name] is None:  # the notebook's "not set" (a page never shows a raw None)
        default = " (not set by default)"
    else:
        default = f" (default {md_code(repr(defaults[name]), table=True)})"
    return md_code(f"{name}={value!r}", table=True) + default


def write_reproducibility_page(path: Path, executed: list[Path], datasets: dict[str, dict], *,
                               defaults: dict[str, dict], built_at: str | None = None, commit: str | None = None,
                               root: Path = ROOT) -> Path:
    """Generate the reproducibility page (markdown) from the executed notebooks' recorded parameters (each shown
    with its default where it differs: ``defaults``, {section key: {parameter: default}} as the notebooks'
    parameters cells give them, :func:`inkground_lib.publish.parameters_cell.all_section_defaults`), fingerprints
    and run times (papermill's ``duration`` and ``end_time``), the dataset hashes, the installed package
    versions, the build time (UTC) and the git commit of ``root``. A page that would differ from the one at
    ``path`` only by its build time is left as it is (its time is that of the build that made what it says): a
    rerun with nothing changed changes no page, so the PDF is not printed again."""
    lines = ["# Reproducibility", "",
             f"Built {built_at or build_time()} from commit {commit or git_state(root)}.", "",
             "This page is generated by `make book` from what was actually run: the parameters papermill "
             "recorded in each executed section, its run time, the content hashes of the datasets it read, and "
             "the installed package versions. A parameter other than the notebook's default is shown with its "
             "default. To rerun a section with other values (the tool is installed in `.venv/` by `make book`; "
             f"papermill and `make lab` do the same, see {{ref}}`{RERUN_LABEL}`):", "",
             "```bash", ".venv/bin/inkground run 04 -p n_boot 200               # a rerun: data/reruns/04_n_boot-200/",
             ".venv/bin/inkground run 04 -p n_boot 200 --into-book   # into this book's runs, shown here by:",
             "make book                                              # (04 is not executed again)", "```", "",
             "A rerun writes into its own folder `data/reruns/<name>/`, never into this book's runs, and records "
             "what it ran with in its `rerun.json`; `.venv/bin/inkground book --defaults` rebuilds the book with "
             "every default. A section whose inputs did not change is not executed again: its run time and date "
             "are those of the run that produced the page.", "", "## Sections", "",
             "| section | parameters | run time | executed (UTC) | fingerprint |", "|---|---|---|---|---|"]
    records = section_records(executed, root)
    for r in records:
        given = defaults.get(r["section"][:2], {})
        params = ", ".join(_parameter_text(k, v, given) for k, v in r["params"].items()) or "defaults"
        ended = r["ended"] or "\u2014 (not recorded)"
        lines.append(f"| {r['section']} | {params} | {run_time(r['duration'])} | {ended} | "
                     f"{md_code(str(r['fingerprint'])[:12], table=True)} |")
    lines += ["", "## Run outputs", "",
              "What each section read and wrote, from the parameters it ran with (paths from the repository's "
              "folder; every number in this book comes from these files):", ""]

    def io_text(paths, patterns=RUN_PATTERNS):
        return "; ".join(f"{md_code(p)} ({run_outputs(p, root, patterns)})" for p in paths)

    for r in records:
        read = io_text(r["reads"], r["read_patterns"]) or "nothing"
        wrote = io_text(r["writes"]) or "nothing (the page only)"
        lines.append(f"* **{r['section']}** read {read}; wrote {wrote}.")
    lines += ["", "## Datasets", "", "| dataset | kind | pages | words | sha256 |", "|---|---|---|---|---|"]
    for name, d in datasets.items():
        lines.append(f"| {md_escape(name)} | {md_escape(d.get('kind', ''))} | {md_escape(d.get('pages', ''))} | "
                     f"{md_escape(d.get('words', ''))} | {md_code(str(d.get('hash', ''))[:16], table=True)} |")
    lines += ["", "## Software", "", f"Python {platform.python_version()} on {platform.machine()} "
              f"({platform.system()}).", "", "| package | version |", "|---|---|"]
    for k, v in package_versions().items():
        lines.append(f"| {k} | {v} |")
    lines.append("")
    text = "\n".join(lines)
    path = Path(path)
    if built_at is None and path.is_file() and _BUILT.sub(r"\1", path.read_text()) == _BUILT.sub(r"\1", text):
        return path
    return atomic_write_text(path, text)


_BUILT = re.compile(r"^Built .* (from commit .*)$", re.M)
"""The page's line that names its build time, and what of it is not the time."""
