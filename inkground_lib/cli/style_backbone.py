"""``inkground style-backbone train`` and ``inkground style-backbone eval``: the writer-style backbone every Style
classifier starts from (card: data/models/STYLE-BACKBONE.md)."""

from __future__ import annotations

import json
from pathlib import Path

from inkground_lib.cli.options import describe, overwrite_option

RECIPES = ("shipped", "tiny")
"""``--recipe``: the shipped backbone's recipe (backbone_training.SHIPPED_RECIPE) or the tests' few steps."""


def _recipe(name: str):
    from inkground_lib.components.style.backbone_training import SHIPPED_RECIPE, TINY_RECIPE  # torch: here only

    return {"shipped": SHIPPED_RECIPE, "tiny": TINY_RECIPE}[name]


def _train(a) -> int:
    from inkground_lib.components.style.backbone_training import REPORT_FILE, train_backbone

    path = train_backbone(a.unipen_dir, a.out, _recipe(a.recipe), progress=not a.quiet, evaluate=not a.no_eval,
                          overwrite=a.overwrite)
    report = json.loads((Path(a.out) / REPORT_FILE).read_text("utf-8"))
    t = report["trained_on"]
    print(f"writer-style backbone: {path} (sha256 {report['sha256']})")
    print(f"trained on {t['train_items']} words of {t['train_writers']} writers "
          f"({t['unipen']['train_writers_kept']} UNIPEN, {t['synthetic']['train_writers']} synthetic); "
          f"{t['unipen']['eval_writers_excluded']} writers of the evaluation list left out "
          f"({t['unipen']['eval_words_excluded']} words); {report['train_seconds']:.0f} s of training")
    print("\n".join(_eval_lines(report.get("evaluation", {}))))
    print(f"report: {Path(a.out) / REPORT_FILE}")
    return 0


def _eval_lines(ev: dict) -> list[str]:
    out = []
    if "validation" in ev:
        v = ev["validation"]
        out.append(f"validation writers ({v['writers']}): head_c {v['head_c']} chosen by the log score from "
                   + ", ".join(f"{r['head_c']}: log score {r['log_score']:.3f}, top-1 {r['top1']:.3f}"
                               for r in v["candidates"]))
    for name in ("pages", "cursive"):
        r = ev.get(f"heldout_{name}")
        if not r:
            continue
        if "not_measured" in r:
            out.append(f"held-out writers, {name}: not measured ({r['not_measured']})")
            continue
        b = r["backbone_head"]
        what = {"pages": "one page of cursive words a writer", "cursive": "every cursive word"}[name]
        line = (f"held-out writers, {what} ({b['writers']} writers, {b['n_test']} test words, chance "
                f"{b['chance']:.3f}): backbone + head top-1 {b['top1']:.3f} [{b['top1_ci'][0]:.3f}, "
                f"{b['top1_ci'][1]:.3f}]")
        if "from_random" in r:
            s, d = r["from_random"], r["difference_top1"]
            line += (f"; from random weights {s['top1']:.3f} [{s['top1_ci'][0]:.3f}, {s['top1_ci'][1]:.3f}]; "
                     f"difference {d['difference']:+.3f} [{d['ci'][0]:+.3f}, {d['ci'][1]:+.3f}]")
        out.append(line)
    return out


def _eval(a) -> int:
    from inkground_lib.components.style.backbone_eval import evaluate_backbone
    from inkground_lib.components.style.backbone_training import SHIPPED_RECIPE

    ev = evaluate_backbone(a.unipen_dir, a.backbone, recipe=SHIPPED_RECIPE, scratch=a.scratch, progress=not a.quiet)
    print("\n".join(_eval_lines(ev)))
    if a.json:
        Path(a.json).write_text(json.dumps(ev, indent=1), encoding="utf-8")
        print(f"report: {a.json}")
    return 0


def add_style_backbone_parser(sub) -> None:
    t = sub.add_parser("style-backbone", help="the writer-style backbone every Style classifier starts from: train "
                                              "it on a UNIPEN release, or measure it on writers it never saw")
    describe(t, "The writer-style backbone (data/models/style-backbone.safetensors, card STYLE-BACKBONE.md): a "
                "ResNet-18 trained once for writer identification on UNIPEN writers outside "
                "data/unipen_eval_writers.txt and synthetic writers whose styles equal no evaluated writer's. "
                "Every benchmark's writer classifier is this backbone and a head fitted on its words.")
    tsub = t.add_subparsers(dest="style_backbone_cmd", required=True)
    tr = tsub.add_parser("train", help="train the backbone from its card's recipe (resumable: the same command "
                                       "after an interruption goes on)")
    describe(tr, "Train the backbone on a whole UNIPEN release and the synthetic writers, never on the writers of "
                 "data/unipen_eval_writers.txt. The state is saved in OUT every few hundred steps, so the same "
                 "command after an interruption goes on; at the end OUT holds style-backbone.safetensors and "
                 "train_report.json (the card's figures). Copy the file to data/models/ and set SHIPPED_SHA256 in "
                 "inkground_lib/components/style/backbone.py to ship it.")
    tr.add_argument("--unipen-dir", dest="unipen_dir", required=True,
                    help="the root of a whole UNIPEN release (data/, include/), e.g. train_r01_v07")
    tr.add_argument("--out", required=True, help="output folder (renders, training state, the backbone, report)")
    tr.add_argument("--recipe", choices=RECIPES, default="shipped",
                    help="shipped: the shipped backbone's recipe (default); tiny: a few steps (tests)")
    tr.add_argument("--no-eval", dest="no_eval", action="store_true", help="skip the held-out measurement")
    tr.add_argument("--quiet", action="store_true", help="no progress bars")
    overwrite_option(tr)
    tr.set_defaults(func=_train)
    ev = tsub.add_parser("eval", help="the backbone + a head against a ResNet-18 from random weights, on the 46 "
                                      "held-out writers it never saw (top-1 with writer-bootstrap intervals)")
    describe(ev, "Measure a backbone (the shipped one, or --backbone) on the held-out writers of "
                 "data/unipen_eval_writers.txt: a head fitted on 75% of each writer's words, top-1 and mean "
                 "true-writer probability on the rest, beside a ResNet-18 trained from random weights on the same "
                 "words.")
    ev.add_argument("--unipen-dir", dest="unipen_dir", required=True, help="the root of a whole UNIPEN release")
    ev.add_argument("--backbone", default=None, help="a backbone file (default: the shipped one)")
    ev.add_argument("--scratch", nargs="*", default=["pages"], choices=["pages", "cursive"],
                    help="the held-out sets on which a ResNet-18 is also trained from random weights (default: "
                         "pages; cursive, every cursive word, takes ~45 CPU-minutes; none: --scratch)")
    ev.add_argument("--json", default=None, help="also write the figures to this JSON file")
    ev.add_argument("--quiet", action="store_true", help="no progress bars")
    ev.set_defaults(func=_eval)
