"""What a user sees while a stage runs (publish.progress_relay, publish.stages): the bars of the progress file on a
terminal or a log, the running cell, the stage's wall and CPU seconds; Ctrl-C held while a notebook is saved."""
import io
import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from inkground_lib.core import progress
from inkground_lib.publish import progress_relay
from inkground_lib.publish.notebook_runner import cell_summary, interrupts_deferred
from inkground_lib.publish.progress_relay import LOG_HEARTBEAT, LOG_INTERVAL, ProgressRelay, relayed
from inkground_lib.publish.stages import Timer, TreeCPU


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def record(f, key, text, **more):
    with open(f, "a") as fh:
        fh.write(json.dumps({"bar": key, "text": text, **more}) + "\n")


@pytest.fixture
def sink(tmp_path):
    f = tmp_path / "progress.jsonl"
    f.touch()
    return f


def test_a_bar_record_is_one_json_line_and_its_final_state_is_recorded_even_when_not_left(sink, monkeypatch):
    monkeypatch.setenv(progress.PROGRESS_ENV, str(sink))
    b = progress.bar(total=10, desc="OCR filter", unit="page", leave=False)
    b.update(3)
    b.close()
    recs = [json.loads(line) for line in sink.read_text().splitlines()]
    assert all(set(r) >= {"bar", "text"} for r in recs) and len({r["bar"] for r in recs}) == 1
    assert recs[-1]["done"] is True and recs[-1]["leave"] is False
    assert "OCR filter" in recs[-1]["text"] and "3/10" in recs[-1]["text"]  # its state at the close, not blank
    assert not any("\r" in r["text"] or "\x1b" in r["text"] for r in recs)


def test_on_a_log_a_bar_is_printed_at_most_every_interval_and_its_final_line(sink):
    out, clock = io.StringIO(), Clock()
    relay = ProgressRelay("section 02", sink, out=out, tty=False, clock=clock)
    record(sink, "1-0", "derender (skeleton):  10%|#         | 1/10")
    relay.poll()
    assert "derender" not in out.getvalue()  # a bar younger than the interval: not yet
    for i in range(2, 6):
        clock.t += LOG_INTERVAL / 3
        record(sink, "1-0", f"derender (skeleton):  {i}0%|#         | {i}/10")
        relay.poll()
    lines = [line for line in out.getvalue().splitlines() if "derender" in line]
    assert len(lines) == 1 and lines[0].startswith("[inkground] section 02 | derender (skeleton)")
    record(sink, "1-0", "derender (skeleton): 100%|##########| 10/10", done=True, leave=False)
    relay.poll()
    lines = [line for line in out.getvalue().splitlines() if "derender" in line]
    assert len(lines) == 2 and lines[-1].endswith("10/10")  # the final line, though the bar was not left


def test_on_a_log_the_running_cell_is_printed_when_it_changes_or_runs_long_and_a_heartbeat(sink):
    out, clock = io.StringIO(), Clock()
    relay = ProgressRelay("section 02", sink, out=out, tty=False, clock=clock)
    relay.set_activity("cell 1/5 (imports)")
    relay.poll()
    relay.set_activity("cell 2/5 (run_pseudo_labels)")  # soon after: held back
    relay.poll()
    assert "cell 1/5 (imports)" in out.getvalue() and "cell 2/5" not in out.getvalue()
    clock.t += LOG_INTERVAL
    relay.poll()  # it has now run for the interval
    assert "[inkground] section 02: cell 2/5 (run_pseudo_labels), 0:15" in out.getvalue()
    clock.t += LOG_HEARTBEAT
    relay.poll()
    assert out.getvalue().splitlines()[-1] == "[inkground] section 02: cell 2/5 (run_pseudo_labels), 1:15 so far"


def test_on_a_terminal_one_line_per_open_bar_is_redrawn_and_a_bar_left_stays(sink):
    out, clock = io.StringIO(), Clock()
    relay = ProgressRelay("section 03", sink, out=out, tty=True, clock=clock)
    relay.set_activity("cell 4/9 (evaluate_dataset)")
    record(sink, "1-0", "Style training:  50%|#####     | 1/2")
    record(sink, "2-0", "Style of renders:  10%|#         | 4/40")
    relay.poll()
    last = out.getvalue().rsplit("\r\x1b[J", 1)[1]
    assert last.split("\n") == ["[inkground] section 03: cell 4/9 (evaluate_dataset), 0:00",
                                "  Style training:  50%|#####     | 1/2",
                                "  Style of renders:  10%|#         | 4/40\x1b[2A\r"]  # cursor back to the block
    n = len(out.getvalue())
    relay.poll()
    assert len(out.getvalue()) == n  # nothing changed: nothing redrawn
    record(sink, "1-0", "Style training: 100%|##########| 2/2", done=True, leave=False)
    record(sink, "2-0", "Style of renders: 100%|##########| 40/40", done=True, leave=True)
    relay.poll()
    text = out.getvalue()[n:]
    assert "Style of renders: 100%|##########| 40/40\n" in text  # left on screen, above the block
    assert "Style training: 100%" not in text  # leave=False: gone
    assert text.endswith("\r\x1b[J[inkground] section 03: cell 4/9 (evaluate_dataset), 0:00\r")
    relay.stop()
    assert out.getvalue().endswith("\r\x1b[J")  # the live block cleared for the stage's last line


def test_relayed_names_the_progress_file_for_the_stage_only_and_reuses_an_outer_stage(monkeypatch):
    monkeypatch.setenv(progress.PROGRESS_ENV, "/elsewhere/progress.jsonl")
    err = io.StringIO()
    with relayed("datasets", out=err, tty=False) as relay:
        path = os.environ[progress.PROGRESS_ENV]
        assert path != "/elsewhere/progress.jsonl" and "book" not in path and "sections" not in path
        with relayed("section 01") as inner:
            assert inner is relay and os.environ[progress.PROGRESS_ENV] == path
        with progress.bar(total=2, desc="synth pages", unit="page") as b:  # this process's bars go there too
            b.update(2)
    assert os.environ[progress.PROGRESS_ENV] == "/elsewhere/progress.jsonl"  # restored
    assert not os.path.exists(path)  # the temporary file is gone
    assert "[inkground] datasets | synth pages: 100%" in err.getvalue()
    assert progress_relay.current() is None


def test_timer_prints_wall_and_cpu_seconds_and_a_stopped_stage(capsys):
    timer = Timer()
    with timer("busy"):
        t = time.process_time()
        while time.process_time() - t < 0.3:
            pass
    with pytest.raises(KeyboardInterrupt):
        with timer("section 09"):
            raise KeyboardInterrupt
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[inkground] busy: ") and " s (CPU 0." in out[0]
    assert out[1].startswith("[inkground] section 09: stopped after")
    assert [s.name for s in timer.stages] == ["busy"] and timer.stages[0].cpu_seconds >= 0.25


def test_tree_cpu_counts_children_running_and_ended():
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\ntime.sleep(30)"
    meter = TreeCPU(interval=0.05).start()
    child = subprocess.Popen([sys.executable, "-c", burn])
    try:
        deadline = time.monotonic() + 30
        while meter._last.get((child.pid, psutil.Process(child.pid).create_time()), 0) < 0.5 \
                and time.monotonic() < deadline:  # followed while it runs
            time.sleep(0.1)
    finally:
        child.kill()
        child.wait()
    assert 0.5 <= meter.stop() < 5  # and counted once it has ended and was waited for, once


def test_tree_cpu_counts_a_grandchild_its_parent_never_waited_for():
    """A notebook kernel's pool workers are reaped by a forkserver the kernel never waits for: their CPU time
    reaches no parent's children times, and only following the processes while they run counts it.

    Issue 44: the child used to sleep 2.5 s and hope the grandchild spun its 1.0 CPU-s meanwhile (at load ~6 it
    had 0.26 CPU-s). Now each step waits for the one before, whatever the load: the grandchild says when it has
    spun its second (and stays alive), the child then says it is ready, the meter stops (its last reading sees
    the grandchild), and only then does the child exit without waiting for it."""
    grandchild = ("import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass\n"
                  "print('spun', flush=True)\nsys.stdin.read()")  # alive until its parent is gone
    child = (f"import os, subprocess, sys\np = subprocess.Popen([sys.executable, '-c', {grandchild!r}], "
             "stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)\n"
             "assert p.stdout.readline() == 'spun\\n'\nprint('ready', flush=True)\nsys.stdin.readline()\n"
             "os._exit(0)")  # ends without waiting for the grandchild
    waited = lambda: sum(psutil.Process().cpu_times()[2:4])  # noqa: E731 (children_user + children_system)
    before = waited()
    meter = TreeCPU(interval=0.05).start()
    proc = subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        seconds = meter.stop()  # the grandchild has used its second and is still in the tree
        proc.stdin.write("exit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
    assert seconds >= 0.95
    assert waited() - before < 0.9  # the waited-for children's times never saw the grandchild's second


def test_ctrl_c_is_held_until_the_block_has_run():
    # Python's Ctrl-C handler, as in a terminal: a test run started in the background by a shell inherits
    # SIGINT ignored, and Python then installs no handler of its own
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        done = []
        with pytest.raises(KeyboardInterrupt):
            with interrupts_deferred():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)  # the signal has arrived: a plain handler would have raised by now
                done.append(True)
        assert done == [True]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    finally:
        signal.signal(signal.SIGINT, inherited)


@pytest.mark.parametrize("source, summary", [
    ("res = run_pseudo_labels(candidates, run_dir, seed=seed)\nglue_all(summary_numbers(res))",
     "run_pseudo_labels, summary_numbers"),
    ('table_view(funnel_table(res), "Table 2.1")', "funnel_table"),
    ("from inkground_lib.core.dataset import load_dataset\nimport numpy as np", "imports"),
    ("x = 1  # a comment", "x = 1  # a comment"),
])
def test_cell_summary_names_what_a_cell_computes(source, summary):
    assert cell_summary(source) == summary


def test_a_bar_too_wide_for_the_terminal_is_drawn_narrower_keeping_its_counts():
    from inkground_lib.publish.progress_relay import fit

    line = "  recorded pages:  56%|##########################1                    | 20/36 [00:06<00:04,  3.66it/s]"
    out = fit(line, 79)
    assert len(out) == 79 and out.endswith("| 20/36 [00:06<00:04,  3.66it/s]")
    bar = out.split("|")[1]
    assert bar.count("#") == round(26.5 / 47 * len(bar))  # 56% of the narrower bar
    assert fit("[inkground] section 02: cell 3/17 (run_pseudo_labels)", 24) == "[inkground] section 02: "
