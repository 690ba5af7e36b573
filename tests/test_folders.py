"""Issue 11, case 2 and 11: every command refuses a non-empty folder it did not create (unless --overwrite, which
still deletes nothing), and one writer at a time holds a folder."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import make_tiny_dataset  # noqa: E402

from inkground_lib.cli import main  # noqa: E402
from inkground_lib.core.folders import (  # noqa: E402
    LOCK_FILE,
    FolderError,
    folder_lock,
    is_locked,
)

ROOT = Path(__file__).resolve().parents[1]


def commands(ds: Path, out: Path) -> dict[str, list[str]]:
    """Each writing command, pointed at ``out`` (cheap settings)."""
    return {
        "synth": ["synth", "--out", str(out), "--pages", "1", "--quiet", "--workers", "1"],
        "recorded": ["recorded", "--out", str(out), "--pages", "1", "--quiet"],
        "pseudo": ["pseudo", "--candidates", str(ds), "--run", str(out), "--quiet"],
        "predict": ["predict", "--system", "box", "--dataset", str(ds), "--run", str(out), "--quiet"],
        "eval": ["eval", "--systems", "box", "--dataset", str(ds), "--run", str(out), "--quiet"],
    }


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("cmd", ["synth", "recorded", "pseudo", "predict", "eval"])
def test_every_command_refuses_a_users_folder(tmp_path, capsys, cmd):
    ds = make_tiny_dataset(tmp_path / "ds")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    (mine / "scores.csv").write_text("a,b\n1,2\n")
    before = snapshot(mine)
    assert main(commands(ds, mine)[cmd]) == 2
    err = capsys.readouterr().err
    assert f"{mine}: not empty and not a" in err and "--overwrite" in err
    assert snapshot(mine) == before and sorted(p.name for p in mine.iterdir()) == ["notes.txt", "scores.csv"]


@pytest.mark.slow  # runs predict and eval end to end in subprocesses
@pytest.mark.parametrize("cmd", ["predict", "eval"])
def test_overwrite_writes_beside_the_users_files_and_a_rerun_resumes(tmp_path, cmd):
    ds = make_tiny_dataset(tmp_path / "ds")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    argv = commands(ds, mine)[cmd]
    assert main(argv + ["--overwrite"]) == 0
    assert (mine / "notes.txt").read_text() == "my notes" and (mine / "predictions" / "box.jsonl").is_file()
    assert main(argv) == 0  # now marked as a run folder: a rerun resumes without --overwrite


@pytest.mark.parametrize("cmd", ["synth", "recorded", "pseudo", "predict", "eval"])
def test_a_second_writer_is_refused_while_the_first_holds_the_folder(tmp_path, capsys, cmd):
    """Case 11: two `pseudo` runs on one run folder both proceeded. A folder being written is locked; any
    other command on it is refused at once and writes nothing."""
    ds = make_tiny_dataset(tmp_path / "ds")
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from inkground_lib.core.folders import folder_lock\n"
        f"with folder_lock({str(out)!r}, 'test'):\n    print('held', flush=True); time.sleep(60)")],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert is_locked(out)
        t0 = time.monotonic()
        assert main(commands(ds, out)[cmd]) == 2
        assert time.monotonic() - t0 < 20
        assert "another inkground command is writing this folder" in capsys.readouterr().err
        assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # nothing written
    finally:
        holder.kill()
        holder.wait()
    assert not is_locked(out)  # a killed holder releases the lock
    assert main(commands(ds, out)[cmd]) in (0, 1)  # runs now (pseudo keeps no page of this tiny set: 1)
    assert len(list(out.iterdir())) > 1


def test_the_lock_is_reentrant_in_one_process_and_released(tmp_path):
    with folder_lock(tmp_path / "f", "outer"):
        with folder_lock(tmp_path / "f", "inner"):
            pass
        code = subprocess.run([sys.executable, "-c", (
            "from inkground_lib.core.folders import folder_lock, FolderError\n"
            f"try:\n    with folder_lock({str(tmp_path / 'f')!r}, 'other'): print('got it')\n"
            "except FolderError as e: print('refused')")], cwd=ROOT, capture_output=True, text=True).stdout
        assert code.strip() == "refused"  # still held by the outer context
    with folder_lock(tmp_path / "f", "again"):
        pass
    with pytest.raises(FolderError, match="exists and is not a folder"):
        from inkground_lib.core.folders import check_output_folder

        (tmp_path / "file").write_text("x")
        check_output_folder(tmp_path / "file", "a dataset", lambda f: True)


@pytest.mark.parametrize("bad", ["../evil", "a/b", ".hidden", "x" * 129, "sys\x00"])
def test_system_names_that_name_files_follow_the_id_rule(tmp_path, bad):
    """Every identifier that becomes a file name passes the one id rule where it enters: system names in a
    registry and in a cache path (as page and word ids do in a manifest)."""
    from inkground_lib.evaluation.cache import CacheError, cache_path
    from inkground_lib.evaluation.systems.base import SystemConfigError
    from inkground_lib.evaluation.systems.registry import load_registry

    reg = tmp_path / "systems.yaml"
    reg.write_text(f"{bad!r}: {{adapter: box}}\n".replace("'", '"'))
    with pytest.raises(SystemConfigError, match="is not a valid id"):
        load_registry(extra=reg, use_env=False)
    with pytest.raises(CacheError, match="is not a valid id"):
        cache_path(tmp_path, bad)
    assert list(tmp_path.iterdir()) == [reg]


def test_a_link_inside_the_output_folder_pointing_outside_is_refused(tmp_path, capsys):
    """Paths are confined on resolved paths: a run folder whose predictions/ is a link to another folder
    would have the cache written there."""
    ds = make_tiny_dataset(tmp_path / "ds")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = tmp_path / "run"
    assert main(commands(ds, run)["predict"]) == 0
    import shutil

    shutil.rmtree(run / "predictions")
    (run / "predictions").symlink_to(elsewhere, target_is_directory=True)
    assert main(commands(ds, run)["predict"]) == 2
    assert "outside the output folder" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []
    (run / "predictions").unlink()
    (run / "inside").mkdir()
    (run / "predictions").symlink_to(run / "inside", target_is_directory=True)  # a link inside is fine
    assert main(commands(ds, run)["predict"]) == 0 and (run / "inside" / "box.jsonl").is_file()


# ------------------------------------------------------------------------------------------------- issue 26

@pytest.mark.parametrize("cmd, theirs", [("synth", "manifest.json"), ("synth", "pages/p0000.jpg"),
                                         ("recorded", "manifest.json"), ("recorded", "inks/p0000.json")])
def test_overwrite_never_replaces_a_file_it_did_not_write(tmp_path, capsys, cmd, theirs):
    """Case 5: `synth --overwrite` replaced a user's manifest.json / pages/p0000.jpg, though its help says the
    user's files are kept. It refuses, naming the file, and changes nothing."""
    ds = make_tiny_dataset(tmp_path / "ds")
    mine = tmp_path / "mine"
    (mine / Path(theirs).parent).mkdir(parents=True, exist_ok=True)
    (mine / theirs).write_text("the user's own file")
    before = snapshot(mine)
    assert main(commands(ds, mine)[cmd] + ["--overwrite"]) == 2
    err = capsys.readouterr().err
    assert f"{mine / theirs}: exists and was not written by inkground" in err and "never replaces" in err
    assert snapshot(mine) == before


def test_overwrite_writes_beside_the_users_files_and_may_rewrite_its_own(tmp_path, capsys):
    ds = make_tiny_dataset(tmp_path / "ds")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    argv = commands(ds, mine)["synth"] + ["--overwrite"]
    assert main(argv) == 0 and (mine / "manifest.json").is_file()
    assert main(argv[:4] + ["2"] + argv[5:]) == 0  # 2 pages now: its own files are rewritten, the user's kept
    assert (mine / "notes.txt").read_text() == "my notes" and len(load_pages(mine)) == 2


def load_pages(folder):
    from inkground_lib.core.dataset import load_dataset

    return load_dataset(folder).pages


@pytest.mark.parametrize("cmd, theirs", [("eval", "summary-reference.csv"), ("eval", "facts-true.json"),
                                         ("pseudo", "pages.csv"), ("predict", "style-true/model.json")])
def test_overwrite_into_a_users_folder_refuses_when_a_run_file_name_is_taken(tmp_path, capsys, cmd, theirs):
    ds = make_tiny_dataset(tmp_path / "ds")
    mine = tmp_path / "mine"
    (mine / Path(theirs).parent).mkdir(parents=True, exist_ok=True)
    (mine / theirs).write_text("the user's own file")
    before = snapshot(mine)
    assert main(commands(ds, mine)[cmd] + ["--overwrite"]) == 2
    err = capsys.readouterr().err
    assert f"{mine / theirs}: exists in a folder inkground did not create" in err and "never replaces" in err
    assert "corrupt" not in err and snapshot(mine) == before


def test_predict_overwrite_does_not_call_the_users_file_a_corrupt_cache(tmp_path, capsys):
    """Case 5: a user's predictions/box.jsonl (a folder of that layout is taken for an old run folder) was
    refused as "the cache is corrupt"; it is "not a prediction cache written by inkground", left as it was."""
    ds = make_tiny_dataset(tmp_path / "ds")
    mine = tmp_path / "mine"
    (mine / "predictions").mkdir(parents=True)
    (mine / "predictions" / "box.jsonl").write_text("my list of boxes\n")
    assert main(commands(ds, mine)["predict"] + ["--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "box.jsonl: not a prediction cache written by inkground" in err and "corrupt" not in err
    assert (mine / "predictions" / "box.jsonl").read_text() == "my list of boxes\n"


def test_a_folder_under_a_link_to_nothing_is_named_not_file_exists(tmp_path):
    """Issue 44: making a run folder under a dangling link (data/reruns/<name> pointing at a removed folder)
    failed with a bare "File exists"; now the link and its missing target are named."""
    from inkground_lib.core.folders import FolderError, dangling_link, folder_lock

    link = tmp_path / "reruns" / "mine"
    link.parent.mkdir()
    link.symlink_to(tmp_path / "gone")
    assert dangling_link(link / "synth" / "03_evaluation") == link and dangling_link(tmp_path) is None
    with pytest.raises(FolderError) as e:
        with folder_lock(link / "synth" / "03_evaluation", "eval"):
            pass
    assert str(e.value) == (f"{link} is a symbolic link to {tmp_path / 'gone'}, which does not exist, so nothing can "
                            f"be written under it; create that folder, or remove the link (rm {link})")
    assert not (tmp_path / "gone").exists()
