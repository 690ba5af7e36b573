"""Issue 32: each truth comparison (an ink against its true ink) is made once per content, in a run's truth log;
the table is the same with or without the log, in one process or several."""
import pandas as pd
import pytest

from inkground_lib.core.dataset import load_dataset
from inkground_lib.core.ink import Ink
from inkground_lib.core.run_files import truth_jsonl
from inkground_lib.datasets.synth.generate import SynthParams, generate
from inkground_lib.pseudo import truth


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    root = tmp_path_factory.mktemp("truth") / "cand"
    generate(root, SynthParams(pages=2, words_min=4, words_max=6, words_mean=5, seed=3, width=700, height=900),
             progress=False)
    return load_dataset(root)


def test_the_log_and_workers_give_the_plain_table_and_nothing_is_compared_twice(ds, tmp_path, monkeypatch):
    words = [w for p in ds.pages for w in p.words]
    inks = {w.id: w.true_ink.transformed(1.0, 2.0, -1.5) for w in words}
    inks[words[0].id] = Ink()  # an empty answer: scored as the invalid output
    plain = truth.truth_metrics(ds, inks)
    assert len(plain) == len(words) and plain["dtw"].notna().all()
    log = truth_jsonl(tmp_path)
    calls = []
    check = truth.stroke_order_check
    monkeypatch.setattr(truth, "stroke_order_check", lambda *a, **k: calls.append(1) or check(*a, **k))
    monkeypatch.setattr(truth, "ORDER_CHUNK", 3)
    logged = truth.truth_metrics(ds, inks, workers=1, log=log)
    pd.testing.assert_frame_equal(plain, logged)
    assert len(calls) == len(words) and log.is_file()
    # read back: no comparison made, the same table to the last bit
    again = truth.truth_metrics(ds, inks, log=log)
    pd.testing.assert_frame_equal(plain, again)
    assert len(calls) == len(words)
    # one word's ink changes: that word alone is compared
    inks2 = dict(inks)
    inks2[words[1].id] = words[1].true_ink
    third = truth.truth_metrics(ds, inks2, log=log)
    assert len(calls) == len(words) + 1
    assert third.loc[1, "dtw"] == 0.0 and third.drop(index=1).equals(plain.drop(index=1))
    # another code: the log's comparisons are not reused
    monkeypatch.setattr(truth, "code_sha256", lambda: "other")
    truth.truth_metrics(ds, inks, log=log)
    assert len(calls) == 2 * len(words) + 1


def test_equal_inks_are_compared_once_and_pool_workers_agree(ds, monkeypatch):
    monkeypatch.setattr(truth, "ORDER_CHUNK", 3)  # several jobs: a pool of 2 processes runs them
    words = [w for p in ds.pages for w in p.words]
    p0 = ds.pages[0]
    p0.words.append(p0.words[0])  # the same word twice: one comparison
    try:
        inks = {w.id: w.true_ink.transformed(1.0, 3.0, 0.0) for w in words}
        serial = truth.truth_metrics(ds, inks, workers=1)
        pooled = truth.truth_metrics(ds, inks, workers=2)
        pd.testing.assert_frame_equal(serial, pooled)
        assert serial.iloc[0].equals(serial.iloc[len(p0.words) - 1])
    finally:
        p0.words.pop()
