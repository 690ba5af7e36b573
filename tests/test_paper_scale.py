"""Every page-parallel stage writes the same files whatever the executor (serial, a 2-process pool, a Dask
cluster on 127.0.0.1), and ``inkground paper-scale`` resumes after kill -9."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inkground_lib.components.derenderers.factory import make_derenderer
from inkground_lib.core.defaults import DERENDERER
from inkground_lib.core.run_files import derender_jsonl
from inkground_lib.core.dataset import load_dataset
from inkground_lib.core.parallel import executor, executor_workers
from inkground_lib.datasets.synth.generate import SynthParams, generate

pytestmark = pytest.mark.slow  # process pools, a Dask cluster, kill -9

SMALL = dict(words_min=2, words_max=5, words_mean=3, width=600, height=760)
TINY_STYLE = {"height": 32, "width": 128, "epochs": 2, "batch_size": 16, "augment": False, "seed": 1,
              "render": {"height": 32, "pen_width": 2.0, "padding": 3}, "start": "random", "fit": "all"}
KINDS = ("serial", "pool", "dask")


@pytest.fixture(scope="module")
def cluster():
    """A Dask cluster on 127.0.0.1: two single-thread workers in this process (processes=False keeps the
    test fast; the process pool covers pickling), reached by its tcp address like a remote one."""
    from distributed import LocalCluster

    c = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, host="127.0.0.1", protocol="tcp",
                     dashboard_address="127.0.0.1:0")  # any free port (None still takes :8787, maybe in use)
    yield c
    c.close()


def _executor(kind, cluster):
    if kind == "serial":
        return executor(1)
    if kind == "pool":
        return executor(2)
    return executor(scheduler=cluster.scheduler_address)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".inkground.lock"}


def _records(path: Path, drop=("seconds",)) -> list[dict]:
    """A cache's records without their timing fields (the only fields that differ between runs)."""
    out = []
    for line in path.read_text("utf-8").splitlines():
        rec = json.loads(line)
        for k in drop:
            rec.pop(k, None)
        out.append(rec)
    return out


def test_the_executor_is_serial_a_pool_or_a_cluster(cluster):
    with executor(1) as ex:
        assert ex is None
    with executor(2) as ex:
        assert executor_workers(ex) == 2 and ex.submit(abs, -3).result() == 3
    with executor(scheduler=cluster.scheduler_address) as ex:
        assert executor_workers(ex) == 2 and ex.submit(abs, -4).result() == 4


def test_synth_writes_the_same_files_on_every_executor(tmp_path, cluster):
    params = SynthParams(pages=5, seed=3, **SMALL)
    files = {}
    for kind in KINDS:
        with _executor(kind, cluster) as ex:
            generate(tmp_path / kind, params, progress=False, workers=1, executor=ex)
        files[kind] = _files(tmp_path / kind)
    assert len(files["serial"]) == 1 + 1 + 5 + 5  # manifest, generator.json, 5 photos, 5 ink files
    assert files["pool"] == files["serial"] and files["dask"] == files["serial"]


def _candidates(tmp_path_factory, name: str, pages: int) -> Path:
    """A small synthetic candidate set (seed 11) written serially, shared by a module's tests."""
    root = tmp_path_factory.mktemp(name) / "cand"
    generate(root, SynthParams(pages=pages, seed=11, **SMALL), progress=False, workers=1)
    return root


@pytest.fixture(scope="module")
def cand(tmp_path_factory):
    return _candidates(tmp_path_factory, "ps", 6)


def test_pseudo_labels_write_the_same_files_on_every_executor(cand, tmp_path, cluster):
    from inkground_lib.pseudo.run import run_pseudo_labels

    ratings = tmp_path / "ratings.csv"  # every page rated 10 by one rater, K = 1: the benchmark keeps what the
    ratings.write_text("page,rater,score\n" + "".join(f"{p.id},r1,10\n" for p in load_dataset(cand).pages))
    out = {}  # OCR filter passes
    for kind in KINDS:
        with _executor(kind, cluster) as ex:
            res = run_pseudo_labels(cand, tmp_path / kind, ocr_threshold=0.5, ratings=ratings, progress=False,
                                    workers=1, executor=ex, raters_per_pair=1)
        files = _files(tmp_path / kind)  # the run folder's own path (in the benchmark's meta) aside
        out[kind] = ({k: v.replace(str(tmp_path / kind).encode(), b"RUN") for k, v in files.items()
                      if k.endswith(".csv") or k.startswith("benchmark/")},
                     _records(derender_jsonl(tmp_path / kind, make_derenderer(DERENDERER).name)),
                     _records(tmp_path / kind / "ocr-rapidocr.jsonl"))
        assert res.words["ocr_rendered"].str.len().gt(0).any()  # the engine really read something
    s = out["serial"]
    assert "pages.csv" in s[0] and "benchmark/manifest.json" in s[0] and len(s[1]) == len(s[2]) == 6
    assert s[0]["words.csv"].count(b"\n") > 6
    for kind in ("pool", "dask"):
        assert out[kind][0] == s[0], kind
        assert out[kind][1] == s[1] and out[kind][2] == s[2], kind


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    return _candidates(tmp_path_factory, "ps3", 3)


def test_predictions_and_scores_are_the_same_on_every_executor(three, tmp_path, cluster):
    from inkground_lib.evaluation.cache import stable_view
    from inkground_lib.evaluation.predict import run_systems
    from inkground_lib.evaluation.render_ocr import read_all_renders
    from inkground_lib.evaluation.run import evaluate_dataset
    from inkground_lib.evaluation.settings import EvalSettings

    settings = EvalSettings(n_boot=20, style={**TINY_STYLE, "eval_batch_size": 1})
    cand = three
    ds = load_dataset(cand)
    systems = ["skeleton", "font", "box"]
    got = {}
    for kind in KINDS:
        run = tmp_path / kind
        with _executor(kind, cluster) as ex:
            runs, unavailable = run_systems(ds, systems, run, settings.grid, False, None, ex)
            read_all_renders(cand, runs.values(), settings, {}, False, ex, log_dir=run)
            assert not unavailable
            # the Style of the renders on the executor: jobs of 8 inference batches of 1 (~3 jobs)
            evaluate_dataset(cand, systems, run, settings, runs=runs, progress=False, executor=ex)
        # a cache's line order is the order answers came back (a serial run's thread pool included): compare
        # the records by word
        preds = {n: sorted(stable_view(json.loads(line) for line in
                                       (run / "predictions" / f"{n}.jsonl").read_text().splitlines()),
                           key=lambda r: r["word_id"])
                 for n in systems}
        got[kind] = ((run / "scores-reference.csv").read_bytes(), (run / "summary-reference.csv").read_bytes(),
                     preds, (run / "ocr-renders-rapidocr.jsonl").read_bytes())
    assert got["serial"][2]["skeleton"] and len(got["serial"][2]["skeleton"]) == ds.n_words
    assert b"skeleton" in got["serial"][0] and got["serial"][3].count(b"\n") >= 1
    import io

    import pandas as pd

    style = pd.read_csv(io.BytesIO(got["serial"][0]))["style_any"]
    assert len(style) > 16 and style.notna().all() and style.nunique() > 8  # several Style jobs, real rows
    for kind in ("pool", "dask"):
        assert got[kind] == got["serial"], kind


# each epoch's job carries the training's state: distributed warns about its size (the README says so)
@pytest.mark.filterwarnings("ignore:Sending large graph:UserWarning")
def test_style_classifiers_have_the_same_weights_on_every_executor(three, tmp_path, cluster):
    """The Style stage as paper-scale runs it (one epoch per job, the state kept in a checkpoint between
    them): the saved models are byte-identical serial, on a pool and on a cluster, and no checkpoint is left."""
    from inkground_lib.components.style import CHECKPOINT_FILE, WEIGHTS_FILE
    from inkground_lib.evaluation.settings import EvalSettings
    from inkground_lib.evaluation.style_stage import start_style_classifier

    ds = load_dataset(three)
    settings = EvalSettings(style={**TINY_STYLE, "epochs": 3})
    got = {}
    for kind in KINDS:
        with _executor(kind, cluster) as ex:
            model, facts = start_style_classifier(ds, tmp_path / kind, settings, ex, False, resumable=True)()
        folder = tmp_path / kind / "style-reference"
        assert facts["trained_now"] and model.out_dir == folder and not (folder / CHECKPOINT_FILE).exists()
        got[kind] = (folder / WEIGHTS_FILE).read_bytes(), model.losses
    assert len(got["serial"][1]) == 3
    for kind in ("pool", "dask"):
        assert got[kind] == got["serial"], kind


def _paper_scale_script(out: Path) -> str:
    return ("import sys\n"
            "from inkground_lib.pipelines.paper_scale import PaperScaleParams, run_paper_scale\n"
            "if __name__ == '__main__':\n"
            f"    run_paper_scale({str(out)!r}, PaperScaleParams(pages=5, seed=5, synth={SMALL!r}, "
            f"style={TINY_STYLE!r}), workers=1, progress=False)\n")


def test_paper_scale_resumes_after_kill_9(tmp_path):
    """kill -9 in the middle of section 02: a rerun keeps the candidates and the cached pages, finishes every
    stage and writes the tables."""
    from inkground_lib.pipelines.paper_scale import STAGES, read_stages

    out = tmp_path / "ps"
    script = tmp_path / "run.py"
    script.write_text(_paper_scale_script(out))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    cache = out / "02_pseudo_labels" / "ocr-rapidocr.jsonl"
    for _ in range(1200):  # the OCR filter has written its first page: kill the driver there
        if cache.is_file() and cache.read_bytes().count(b"\n") >= 1 or proc.poll() is not None:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = read_stages(out)
    assert list(first["stages"]) == ["synth"]  # killed inside the pseudo stage
    photo = next((out / "candidates" / "pages").glob("*.jpg"))
    mtime = photo.stat().st_mtime_ns
    kept = cache.read_text().splitlines()
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    rec = read_stages(out)
    assert set(rec["stages"]) == set(STAGES)
    assert rec["stages"]["synth"] == first["stages"]["synth"]  # not redone
    assert photo.stat().st_mtime_ns == mtime
    assert cache.read_text().splitlines()[:len(kept) - 1] == kept[:len(kept) - 1]  # earlier pages kept
    assert rec["peak_memory_gb"] > 0
    for name in ("02_funnel.md", "03_summary-reference.md", "03_summary-true.md"):
        assert (out / "tables" / name).stat().st_size > 100
    summary = (out / "tables" / "03_summary-true.csv").read_text()
    assert all(s in summary for s in ("reference", "skeleton", "font", "box"))

    # killed while scoring (what kill -9 leaves then: no score record, no section-03 tables): the rerun reloads
    # the predictions and the classifiers to score, and their records keep the measurement of the run that
    # computed them, with the reload's seconds beside it
    del rec["stages"]["score"]
    (out / "stages.json").write_text(json.dumps(rec))
    for name in ("03_summary-reference.csv", "03_summary-reference.md", "03_summary-true.csv", "03_summary-true.md"):
        (out / "tables" / name).unlink()
    again = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-2000:]
    third = read_stages(out)
    assert set(third["stages"]) == set(STAGES)
    for stage in ("predict", "style"):
        kept = dict(third["stages"][stage])
        assert kept.pop("reloaded_seconds") >= 0 and "reloaded_seconds" not in rec["stages"][stage]
        assert kept == rec["stages"][stage], stage
    assert third["stages"]["score"]["finished"] >= rec["stages"]["style"]["finished"]
    assert (out / "tables" / "03_summary-true.csv").read_text() == summary

    # killed while scoring after a system's prediction cache was deleted: the rerun predicts it again, so
    # predict is measured again (a new record); Style is still only reloaded
    del third["stages"]["score"]
    (out / "stages.json").write_text(json.dumps(third))
    (out / "03_evaluation" / "predictions" / "box.jsonl").unlink()
    again = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-2000:]
    fourth = read_stages(out)
    assert "reloaded_seconds" not in fourth["stages"]["predict"]
    assert fourth["stages"]["predict"]["finished"] >= third["stages"]["predict"]["finished"]
    assert fourth["stages"]["style"]["seconds"] == rec["stages"]["style"]["seconds"]
    assert "reloaded_seconds" in fourth["stages"]["style"]
    assert (out / "tables" / "03_summary-true.csv").read_text() == summary
