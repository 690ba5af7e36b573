"""A section's fingerprint covers the library code it may run (its notebook's import closure), not the whole
library; a section's kernel does not print its log noise (issue 35)."""
import shutil

import pytest

from inkground_lib.core.layout import ROOT
from inkground_lib.publish import notebook_runner as nr


def _library_copy(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "inkground_lib", root / "inkground_lib", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _code_prints(root):
    return {s.key: nr.code_fingerprint(nr.section_code_files(s, root), root) for s in nr.sections()}


def _edit(path):
    path.write_text(path.read_text() + "\n# an edit\n")


def test_report_change_reruns_no_section_pseudo_change_reruns_what_imports_it(tmp_path):
    """Sections 03 and 04 also rerun when 02's outputs change (make_book.earlier_outputs_hash, tested in
    test_runner.py); here only the code part of the fingerprint."""
    root = _library_copy(tmp_path)
    before = _code_prints(root)
    assert set(before) >= {"01", "02", "03", "04"}
    for page_module in ("front.py", "reviewers.py", "reproducibility.py", "tracer_page.py"):
        _edit(root / "inkground_lib" / "report" / page_module)  # pages written after the sections
    _edit(root / "inkground_lib" / "publish" / "make_book.py")
    assert _code_prints(root) == before
    _edit(root / "inkground_lib" / "pseudo" / "run.py")  # section 02's pipeline
    after = _code_prints(root)
    assert {k for k in before if before[k] != after[k]} == {"02"}
    _edit(root / "inkground_lib" / "pseudo" / "benchmark.py")  # the benchmark set, which section 03 reads too
    before, after = after, _code_prints(root)
    assert {k for k in before if before[k] != after[k]} == {"02", "03"}
    _edit(root / "inkground_lib" / "core" / "layout.py")
    assert all(v != after[k] for k, v in _code_prints(root).items())


def test_data_files_beside_an_imported_module_count(tmp_path):
    root = _library_copy(tmp_path)
    before = _code_prints(root)
    data = root / "inkground_lib" / "evaluation" / "systems" / "systems.yaml"
    readers = {s.key for s in nr.sections() if data in nr.section_code_files(s, root)}
    assert "03" in readers  # section 03 runs the systems of the registry
    _edit(data)
    after = _code_prints(root)
    assert {k for k in before if before[k] != after[k]} == readers


def test_import_closure_follows_relative_lazy_and_submodule_imports(tmp_path):
    lib = tmp_path / "inkground_lib"
    for rel, text in {
        "__init__.py": "",
        "a/__init__.py": "",
        "a/top.py": "from . import sub\n",  # a submodule named in `from package import name`
        "a/sub.py": "def f():\n    from ..b.lazy import g\n    return g\n",  # relative, inside a function
        "b/__init__.py": "",
        "b/lazy.py": "import numpy\nfrom inkground_lib.c import deep\n",
        "c/__init__.py": "",
        "c/deep.py": "X = 1\n",
        "c/unused.py": "",
        "d/never.py": "",
    }.items():
        (lib / rel).parent.mkdir(parents=True, exist_ok=True)
        (lib / rel).write_text(text)
    found = nr.import_closure(["%matplotlib inline\nfrom inkground_lib.a.top import sub"], tmp_path)
    assert sorted(p.relative_to(lib).as_posix() for p in found) == [
        "__init__.py", "a/__init__.py", "a/sub.py", "a/top.py", "b/__init__.py", "b/lazy.py", "c/__init__.py",
        "c/deep.py"]


def test_run_section_reuses_after_an_edit_outside_its_closure(tmp_path, monkeypatch, fake_papermill):
    """run_section itself: an edit the section does not import keeps the executed notebook; one it imports
    executes it again."""
    calls = fake_papermill
    root = _library_copy(tmp_path)
    real = nr.section_code_files
    monkeypatch.setattr(nr, "section_code_files", lambda section, r=ROOT: real(section, root))
    monkeypatch.setattr(nr, "code_fingerprint", lambda files, r=ROOT, f=nr.code_fingerprint: f(files, root))
    out = tmp_path / "sections"
    assert nr.run_section("01", out_dir=out)[1] is True
    _edit(root / "inkground_lib" / "report" / "front.py")
    assert nr.run_section("01", out_dir=out)[1] is False
    _edit(root / "inkground_lib" / "datasets" / "statistics.py")
    assert nr.run_section("01", out_dir=out)[1] is True
    assert len(calls) == 2


@pytest.mark.slow  # starts two kernels (~3 s each)
def test_section_kernel_prints_no_log_noise(tmp_path, capfd):
    """The kernel's "running over TCP without encryption" warning reaches the terminal without
    KERNEL_ARGUMENTS and not with them (papermill with the runner's engine)."""
    import nbformat
    import papermill as pm

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = tmp_path / "n.ipynb"
    nbformat.write(nb, src)

    class Watch:  # the runner's watch (notebook_runner._Watch) without its relay
        def started(self, nb): pass
        def on_cell_start(self, cell, cell_index): pass
        def finished(self, nb): pass

    def run():
        pm.execute_notebook(str(src), str(tmp_path / "o.ipynb"), engine_name=nr._engine(), progress_bar=False,
                            kernel_name="python3", watch=Watch())
        return capfd.readouterr().err

    assert "without encryption" not in run()
    from unittest import mock
    with mock.patch.object(nr, "KERNEL_ARGUMENTS", ()):
        assert "without encryption" in run()  # the check can fail: without the arguments the warning shows


@pytest.mark.slow  # the pseudo-label pipeline and the derenderer comparison on 3 tiny pages, three times (~20 s)
def test_a_default_rerun_of_section_02_leaves_the_next_sections_current(tmp_path, monkeypatch):
    """Issue 46: a default Run All of section 02 (JupyterLab, papermill: the book's own run) rewrote its run with
    other stage timings, and the next `make book` executed sections 03 and 04 again. What the later sections'
    fingerprints read of section 02's run (run_outputs_hash) is the same after the same run again - resumed from
    its caches, and from nothing but its results (caches deleted, everything computed again) - though the
    records of how it went (timings, seconds) differ."""
    import json

    import inkground_lib.core.earlier_runs  # noqa: F401  (reads layout.ROOT when imported: before the stand-in)
    from inkground_lib.core import layout
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.datasets.synth.generate import SynthParams, generate
    from inkground_lib.pseudo.derenderer_comparison import section_comparison
    from inkground_lib.pseudo.run import run_pseudo_labels

    monkeypatch.setattr(layout, "ROOT", tmp_path)
    cand = generate(tmp_path / "data/datasets/synth", SynthParams(pages=3, width=500, height=650, words_min=1,
                    words_max=2, words_mean=1.5, seed=3), progress=False, workers=1)
    run = tmp_path / "data/runs/synth/02_pseudo_labels"

    def section_02():
        run_pseudo_labels(str(cand), str(run), derenderer="skeleton", ocr_threshold=0.0, progress=False, workers=1)
        section_comparison(load_dataset(cand), "", ["skeleton"], run, seed=0, workers=1)
        summary = json.loads((run / "summary.json").read_text())
        return nr.run_outputs_hash([run]), summary

    first, summary = section_02()
    assert summary["timings"] and list(run.rglob("words-skeleton.csv"))  # the facts, and the comparison's table
    assert section_02()[0] == first  # resumed from its caches
    for f in run.rglob("*.jsonl"):  # every content-keyed store: computed again
        f.unlink()
    again, summary_again = section_02()
    assert again == first
    assert nr._without_facts(summary_again) == nr._without_facts(summary)
    (run / "pages.csv").write_text((run / "pages.csv").read_text() + "\n")  # a result that differs does count
    assert nr.run_outputs_hash([run]) != first
