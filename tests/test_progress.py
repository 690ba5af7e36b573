"""Where progress bars go (core.progress): the runner's progress file, else stderr, never a kernel's output."""

import sys

from inkground_lib.core import progress


def test_a_bar_goes_to_the_progress_file_when_the_runner_names_one(tmp_path, monkeypatch, capsys):
    sink = tmp_path / "progress.log"
    monkeypatch.setenv(progress.PROGRESS_ENV, str(sink))
    with progress.bar(total=3, desc="derender (skeleton)", unit="word") as b:
        for _ in range(3):
            b.update(1)
    text = sink.read_text()
    assert "derender (skeleton)" in text and "3/3" in text
    assert "derender" not in capsys.readouterr().err


def test_without_the_variable_a_bar_goes_to_stderr_outside_a_kernel(monkeypatch, capsys):
    monkeypatch.delenv(progress.PROGRESS_ENV, raising=False)
    assert not progress.in_kernel()
    list(progress.bar(range(4), desc="OCR filter (rapidocr)"))
    assert "OCR filter (rapidocr)" in capsys.readouterr().err


def test_inside_a_kernel_without_the_variable_no_bar_is_drawn(monkeypatch, capsys):
    monkeypatch.delenv(progress.PROGRESS_ENV, raising=False)
    monkeypatch.setattr(progress, "in_kernel", lambda: True)
    assert progress.progress_stream() is None
    assert list(progress.bar(range(5), desc="hidden")) == [0, 1, 2, 3, 4]  # still iterates
    assert "hidden" not in capsys.readouterr().err


def test_a_disabled_bar_draws_nothing_even_with_a_progress_file(tmp_path, monkeypatch):
    sink = tmp_path / "progress.log"
    monkeypatch.setenv(progress.PROGRESS_ENV, str(sink))
    with progress.bar(total=2, desc="off", enabled=False) as b:
        b.update(2)
    assert not sink.exists() or "off" not in sink.read_text()


def test_in_kernel_is_false_for_a_plain_ipython_shell(monkeypatch):
    class TerminalInteractiveShell:  # an IPython terminal: stderr is the terminal
        pass

    class FakeIPython:
        @staticmethod
        def get_ipython():
            return TerminalInteractiveShell()

    monkeypatch.setitem(sys.modules, "IPython", FakeIPython)
    assert not progress.in_kernel()

    class ZMQInteractiveShell:
        pass

    FakeIPython.get_ipython = staticmethod(lambda: ZMQInteractiveShell())
    assert progress.in_kernel()
