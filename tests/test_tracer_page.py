"""The book's tracer page: the shipped model card included, the shipped curves drawn (issue 29)."""

from __future__ import annotations


import pandas as pd
import pytest

from inkground_lib.components.derenderers.tracer.weights import SHIPPED_CURVES
from inkground_lib.report.tracer_page import read_curves, write_tracer_page


def test_the_shipped_curves_are_tracked_and_read():
    curves = read_curves()
    assert len(curves) >= 1 and list(curves["epoch"]) == sorted(curves["epoch"])


def test_the_page_holds_the_card_and_its_caption_numbers_are_the_curves_last_row(tmp_path):
    page = write_tracer_page(tmp_path / "sections")
    text = page.read_text()
    card = (SHIPPED_CURVES.parent / "MODEL.md").read_text().strip()
    assert card in text and str(SHIPPED_CURVES.parent) not in text
    assert (page.parent / "tracer_curves.png").stat().st_size > 10_000
    last = pd.read_csv(SHIPPED_CURVES).iloc[-1]
    assert f"{last['val_order_differs']:.3f} of the words" in text
    assert f"skeleton {last['skeleton_val_dtw_median']:.3f}" in text


def test_a_broken_curves_file_is_named(tmp_path):
    bad = tmp_path / "curves.csv"
    bad.write_text("epoch,train_loss\n1,0.5\n")
    with pytest.raises(ValueError, match=r"curves.csv: not a tracer curves file .*val_loss"):
        write_tracer_page(tmp_path / "s", curves_path=bad)
    with pytest.raises(FileNotFoundError, match="missing"):
        write_tracer_page(tmp_path / "s", curves_path=tmp_path / "none.csv")
    assert not (tmp_path / "s" / "tracer.md").exists()
