"""Section-03 runs summarised side by side for section 04 (the runs are read by
:func:`inkground_lib.core.run_loaders.load_eval_run`)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from inkground_lib.core.defaults import N_BOOT
from inkground_lib.core.run_loaders import EvalRun
from inkground_lib.evaluation.scores import summarize


def summary_table(runs: Sequence[EvalRun], n_boot: int = N_BOOT, seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    """evaluate.summarize of every run (page bootstrap with ``n_boot`` replicates and ``seed``), one row per
    (dataset, system), with label, kind, the style classifier's chance level and top-1 accuracy."""
    frames = []
    for r in runs:
        if not len(r.scores):
            continue
        s = summarize(r.scores, n_boot=n_boot, seed=seed, ci=ci)
        meta = r.scores.drop_duplicates("system").set_index("system")
        s.insert(0, "dataset", r.dataset)
        s.insert(2, "label", s["system"].map(meta["label"]) if "label" in meta else s["system"])
        s.insert(3, "kind", s["system"].map(meta["kind"]) if "kind" in meta else "")
        st = r.facts.get("style") or {}
        s["chance"] = float(st.get("chance", np.nan))
        s["n_classes"] = st.get("n_classes", np.nan)
        s["style_top1"] = float(st.get("top1", np.nan))
        frames.append(s)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
