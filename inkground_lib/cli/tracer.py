"""``inkground tracer train`` and ``inkground tracer eval``: inkground's learned derenderer (the tracer)."""

from __future__ import annotations

import json

from inkground_lib.cli.options import describe, overwrite_option

RECIPES = ("shipped", "full", "tiny")
"""``--recipe``: the shipped weights' recipe (tracer.train.SHIPPED_RECIPE), every allowed word (Recipe()), or the
tests' few steps (TINY)."""


def _recipe(name: str):
    # torch and the training code: imported for this command only, not for `inkground --help`
    from inkground_lib.components.derenderers.tracer.train import SHIPPED_RECIPE, TINY, Recipe

    return {"shipped": SHIPPED_RECIPE, "full": Recipe(), "tiny": TINY}[name]


def _train(a) -> int:
    from inkground_lib.components.derenderers.tracer.train import train_tracer  # torch: this command only

    path = train_tracer(a.unipen_dir, a.out, _recipe(a.recipe), progress=not a.quiet, overwrite=a.overwrite)
    report = json.loads((path.parent / "train_report.json").read_text("utf-8")) if path.name == "tracer.npz" else {}
    final = report.get("final", {})
    if final:
        print(f"tracer weights: {path} (sha256 {report['weights_sha256']})")
        t = report["trained_on"]
        print(f"trained on {t['train_words_used']} words of {t['train_writers_used']} writers; "
              f"{t['eval_writers_excluded']} writers of the evaluation list left out ({t['eval_words_excluded']} words)")
        print(f"validation ({t['val_writers']} writers, {t['val_words']} words): order differs "
              f"{final['val_order_differs']:.3f} (skeleton {final['skeleton_val_order_differs']:.3f}), DTW median "
              f"{final['val_dtw_median']:.4f} (skeleton {final['skeleton_val_dtw_median']:.4f}) word heights")
        print(f"curves: {path.parent / 'curves.csv'}")
    else:
        print(f"stopped after an epoch; the same command resumes from {path}")
    return 0


def _eval(a) -> int:
    from inkground_lib.pseudo.tracer_eval import evaluate_tracer  # torch: this command only

    rep = evaluate_tracer(a.unipen_dir, a.out, weights=a.weights, group=a.group, synth_pages=a.synth_pages,
                          seed=a.seed, progress=not a.quiet, overwrite=a.overwrite)
    for name, res in rep["sets"].items():
        for der in ("tracer", "skeleton"):
            r = res[der]
            print(f"{name:9s} {der:9s} words {r['words']:5d}  DTW median {r['dtw_median']:.4f}  "
                  f"order differs {r['order_differs']:.3f}  direction differs {r['direction_differs']:.3f}")
        print(f"{name:9s} tracer / skeleton: DTW {res['ratio']['dtw_median']:.3f}, "
              f"order {res['ratio']['order_differs']:.3f}")
    print(f"report: {a.out}/eval_report.json")
    return 0


def add_tracer_parser(sub) -> None:
    t = sub.add_parser("tracer", help="inkground's learned derenderer: train it on a UNIPEN release, or check it "
                                      "against writers it never saw")
    describe(t, "inkground's learned derenderer (the tracer), which makes section 02's pseudo-labels: `tracer "
                "train` trains it on a whole UNIPEN release, never on the writers the evaluation keeps out "
                "(data/unipen_eval_writers.txt); `tracer eval` measures it and the skeleton against the true pen "
                "paths of writers it never saw. The shipped weights are in data/models/.")
    tsub = t.add_subparsers(dest="tracer_cmd", required=True)
    tr = tsub.add_parser("train", help="train the tracer (never on the writers of data/unipen_eval_writers.txt); "
                                       "resumable: the same command after an interruption goes on")
    describe(tr, "Train the tracer on the words of a whole UNIPEN release, leaving out every writer of "
                 "data/unipen_eval_writers.txt. After each epoch the state is saved in OUT, so the same command after "
                 "an interruption goes on; at the end OUT holds tracer.npz (the weights), train_report.json and "
                 "curves.csv. `inkground pseudo --derenderer tracer:OUT/tracer.npz` uses the weights.")
    tr.add_argument("--unipen-dir", dest="unipen_dir", required=True,
                    help="the root of a whole UNIPEN release (data/, include/), e.g. train_r01_v07")
    tr.add_argument("--out", required=True, help="output folder (checkpoints, curves.csv, tracer.npz)")
    tr.add_argument("--recipe", choices=RECIPES, default="shipped",
                    help="shipped: the shipped weights' recipe (default); full: every allowed word; tiny: a few steps")
    tr.add_argument("--quiet", action="store_true", help="no progress bars")
    overwrite_option(tr)
    tr.set_defaults(func=_train)
    ev = tsub.add_parser("eval", help="tracer and skeleton against the writers' true pen paths, on recorded pages of "
                                      "held-out writers and on synthetic pages")
    describe(ev, "Measure the tracer (the shipped weights or --weights) and the skeleton against the true pen "
                 "paths: on recorded pages of writers the tracer never saw and on synthetic pages. Prints DTW "
                 "medians and how often stroke order and direction differ; OUT/eval_report.json has the rest.")
    ev.add_argument("--unipen-dir", dest="unipen_dir", required=True, help="the UNIPEN release the writers come from")
    ev.add_argument("--out", required=True, help="output folder (datasets, derender caches, eval_report.json)")
    ev.add_argument("--weights", help="tracer weights (.npz; default: the shipped ones)")
    ev.add_argument("--group", default="held-out", choices=("held-out", "shipped"),
                    help="which writers of the evaluation list (default: held-out)")
    ev.add_argument("--synth-pages", dest="synth_pages", type=int, default=20, help="synthetic pages (0: none)")
    ev.add_argument("--seed", type=int, default=0, help="seed of the pages it composes (default 0)")
    ev.add_argument("--quiet", action="store_true", help="no progress bars")
    overwrite_option(ev)
    ev.set_defaults(func=_eval)
