"""``inkground synth``, ``inkground recorded`` and ``inkground validate``: datasets made and checked."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from inkground_lib.cli.options import describe, lazy_defaults, overwrite_option


def _synth(a) -> None:
    # numpy and scipy: imported when the command runs, not for `inkground --help`
    from inkground_lib.datasets.synth.generate import SynthParams, generate

    fields = {k: v for k, v in vars(a).items() if k in SynthParams.__dataclass_fields__ and v is not None}
    params = SynthParams(**fields)
    out = generate(Path(a.out), params, progress=not a.quiet, workers=a.workers, overwrite=a.overwrite)
    print(out)


def _recorded(a) -> None:
    # numpy and scipy: imported when the command runs, not for `inkground --help`
    from inkground_lib.datasets.recorded import build_recorded

    kw = {k: getattr(a, k) for k in ("unipen", "unipen_dir", "iamondb", "inkml", "pages", "seed")
          if getattr(a, k) is not None}
    if a.inkml is not None:
        kw.update(inkml_writer=a.inkml_writer, inkml_dialect=a.inkml_dialect, inkml_symbols=a.inkml_symbols)
    if a.words_per_page is not None:
        wpp = [v for x in a.words_per_page for v in (x if isinstance(x, tuple) else (x,))]
        if len(wpp) not in (1, 2):
            raise ValueError(f"--words-per-page: expected MIN MAX or MIN-MAX, got {len(wpp)} numbers")
        kw["words_per_page"] = (wpp[0], wpp[-1])
    if a.unipen_dir is not None:
        kw.update(category=None if a.category.lower() == "any" else a.category,
                  style=None if a.style.lower() == "any" else a.style,
                  quality=None if a.quality.lower() == "any" else a.quality)
    out = build_recorded(Path(a.out), progress=not a.quiet, overwrite=a.overwrite, **kw)
    meta = json.loads((out / "manifest.json").read_text("utf-8"))["meta"]
    for src in meta["sources"]:
        if src["kind"] != "unipen_dir":
            continue
        sel = ", ".join(f"{k} {'any' if v is None else v}" for k, v in src["selection"].items())
        print(f"UNIPEN release {src['path']} ({sel})")
        print(f"  files: {src['files_found']} found, {src['files_parsed']} parsed, {src['files_failed']} failed"
              + "".join(f"; {k}: {n}" for k, n in src["failures_by_kind"].items()))
        for f, why in src["failed_files"][:10]:
            print(f"    {f}: {why}")
        print(f"  segments read: {src['segments_read']}, skipped: {sum(src['segments_skipped'].values())}"
              + "".join(f"; {k}: {n}" for k, n in src["segments_skipped"].items()))
        print(f"  words selected: {src['words']} from {src['writers_selected']} writers")
    for src in meta["sources"]:
        if src["kind"] == "iamondb":
            print(f"IAM-OnDB {src['path']}: {src['files_read']} of {src['files_found']} line files read, "
                  f"{src['files_failed']} files failed")
            for f, why in src["failed_files"][:10]:
                print(f"    {f}: {why}")
            print(f"  lines: {src['lines']} read, {src['lines_kept']} kept (cut into words that fit their lengths"
                  f"; {src['lines_matched_by_length']} matched to their text by length)"
                  + "".join(f"; skipped, {k}: {n}" for k, n in src["lines_skipped"].items())
                  + "; what each line got: sources.json (iamondb_lines)")
            if src["quirks"]:
                print("  handled: " + "; ".join(f"{k}: {n}" for k, n in src["quirks"].items()))
                for q in src["quirk_examples"][:5]:
                    print(f"    {q}")
            print(f"  words: {src['words']}" + "".join(f"; not targets ({k}): {n}"
                                                     for k, n in src["words_not_targets"].items()))
        elif src["kind"] == "inkml":
            print(f"InkML {src['path']} (writer per {src['writer_rule']}, dialect {src['dialect']}): "
                  f"{src['files_parsed']} of {src['files_found']} files read, {src['files_failed']} failed"
                  + "".join(f"; {k}: {n}" for k, n in src["dialects"].items()))
            for f, why in src["failed_files"][:10]:
                print(f"    {f}: {why}")
            for f, why in src.get("files_not_inkml", [])[:10]:
                print(f"    {f}: {why}")
            for f, why in src.get("files_without_writer", [])[:10]:
                print(f"    {f}: {why}")
            for ex in src.get("words_skipped_examples", [])[:10]:
                print(f"    left out: {ex}")
            if src["warnings"]:
                print(f"  assumed ({src['warnings']} warnings): "
                      + "; ".join(f"{k}: {n}" for k, n in src["warnings_by_kind"].items()))
                for w in src["warning_examples"][:10]:
                    print(f"    {w}")
            print(f"  words: {src['words']} from {src['writers']} writers ({src['groups_read']} groups read"
                  + "".join(f"; left out, {k}: {n}" for k, n in src["words_skipped"].items())
                  + (f"; no width or height: {src['words_degenerate']}" if src["words_degenerate"] else "") + ")")
    lo, hi = meta["params"]["words_per_page"]
    print(f"pages: {meta['pages_built']} ({lo}-{hi} words each, one writer per page), writers: {meta['writers']}")
    print(out)


def _words_per_page(text: str) -> int | tuple[int, int]:
    if "-" in text:
        lo, _, hi = text.partition("-")
        return (int(lo), int(hi))
    return int(text)


def _validate(a) -> int:
    # numpy: imported when the command runs, not for `inkground --help`
    from inkground_lib.core.validate import exit_code, format_report, validate_dataset

    problems = validate_dataset(a.dir)
    print("\n".join(format_report(a.dir, problems)), file=sys.stderr if problems else sys.stdout)
    return exit_code(problems)


def _synth_defaults() -> dict:
    import dataclasses

    from inkground_lib.datasets.synth.generate import SynthParams  # numpy: only when `synth --help` is shown

    return {f.name: f.default for f in dataclasses.fields(SynthParams) if f.default is not dataclasses.MISSING}


def add_synth_parser(sub) -> None:
    s = sub.add_parser("synth", help="generate a synthetic dataset of photographed cursive pages")
    describe(s, "Draw synthetic cursive pages (one synthetic writer per page) and photograph them: each page's "
                "photo, its words' texts, boxes and true pen trajectories, in a dataset folder (manifest.json, "
                "pages/). Page i depends only on the seed and i; an identical folder is reused, an interrupted one "
                "resumed. The book's synthetic set is `make book`'s; see `inkground validate` to check a folder.",
             lazy_defaults(_synth_defaults))
    s.add_argument("--out", required=True, help="dataset folder to write (created; resumed if it is an earlier "
                                                 "synth folder)")
    s.add_argument("--pages", type=int, help="number of pages")
    s.add_argument("--seed", type=int, help="page i is drawn from the generator seeded with (seed, i)")
    s.add_argument("--words-min", dest="words_min", type=int, help="fewest words on a page")
    s.add_argument("--words-max", dest="words_max", type=int, help="most words on a page")
    s.add_argument("--words-mean", dest="words_mean", type=float, help="mean words per page (right-skewed)")
    s.add_argument("--width", type=int, help="page photo width in pixels")
    s.add_argument("--height", type=int, help="page photo height in pixels")
    s.add_argument("--workers", type=int, help="worker processes drawing pages (default: every core)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    overwrite_option(s)
    s.set_defaults(func=_synth)


def add_recorded_parser(sub) -> None:
    r = sub.add_parser("recorded", help="compose photographed pages from real recorded words")
    describe(r, "Compose photographed pages from real recorded handwriting (one writer per page), each word's "
                "recorded trajectory its ground truth: from the UNIPEN subset shipped in data/unipen_cursive/ "
                "(the default), a UNIPEN JSON file, a whole UNIPEN release, IAM-OnDB or a folder of InkML files. "
                "Source paths inside the checkout are recorded relative to it, so a moved checkout keeps the "
                "dataset; an identical folder is reused.")
    r.add_argument("--out", required=True, help="dataset folder to write (created; rebuilt only if its sources or "
                                                 "settings changed)")
    r.add_argument("--unipen", help="a UNIPEN-format JSON file (default: the shipped subset data/unipen_cursive/unipen_cursive_dev.json)")
    r.add_argument("--unipen-dir", dest="unipen_dir",
                   help="the root of a whole UNIPEN release in the original format (data/, include/; .dat and .unp "
                   "files), e.g. train_r01_v07, or a folder of UNIPEN files")
    r.add_argument("--category", default="6", help="with --unipen-dir: release categories, e.g. 6 (isolated cursive or mixed words) or 6,7; 'any' "
                        "(needed for a folder of .dat files that is not a release)")
    r.add_argument("--style", default="CURSIVE", help="with --unipen-dir: .STYLE labels to keep, e.g. CURSIVE or CURSIVE,MIXED; 'any'")
    r.add_argument("--quality", default="!BAD", help="with --unipen-dir: segment qualities to keep: !BAD (all but BAD), GOOD,OK, 'any'")
    r.add_argument("--words-per-page", dest="words_per_page", nargs="+", type=_words_per_page, metavar="MIN MAX",
                   help="words per page: MIN MAX or MIN-MAX (default 20-50 with --unipen-dir, else 4-8)")
    r.add_argument("--iamondb", help="the root of an IAM-OnDB copy (lineStrokes/, original/)")
    r.add_argument("--inkml", help="a folder of word-level InkML files (.inkml, .ink, and the .xml ink Word, OneNote "
                   "and Journal save), each word's text in an annotation (truth, textField) or a traceGroup's "
                   "annotation")
    r.add_argument("--inkml-writer", dest="inkml_writer", choices=("auto", "annotation", "file", "folder"),
                   default="auto", help="with --inkml: auto (default: each word's <annotation type=\"writer\">, else "
                   "its file's folder, else the file), annotation (writer annotations only), or one writer per file "
                   "or per folder")
    r.add_argument("--inkml-symbols", dest="inkml_symbols", action="store_true",
                   help="with --inkml: keep texts that are not words (math, symbols, numbers) as targets")
    r.add_argument("--inkml-dialect", dest="inkml_dialect", choices=("auto", "w3c", "inksight"), default="auto",
                   help="with --inkml: auto (default: InkSight's derenderings detected), w3c, or inksight (x,y pairs)")
    r.add_argument("--pages", type=int, help="number of pages (default: one per writer with enough words; more "
                                             "pages take further words of the writers in turn)")
    r.add_argument("--seed", type=int, help="seed of the page layouts, photo effects and splits (default 0)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    overwrite_option(r)
    r.set_defaults(func=_recorded)


def add_validate_parser(sub) -> None:
    v = sub.add_parser("validate", help="check a dataset folder against the manifest's JSON Schema and its files")
    describe(v, "Check a dataset folder someone brings: every fault of manifest.json against its JSON Schema "
                "(core/dataset.schema.json), then the files it names (photos, their sizes, the inks). Prints one "
                "line per fault with where it is; exit status 0 valid, 1 faults found, 2 unreadable.")
    v.add_argument("dir", help="dataset folder holding manifest.json")
    v.set_defaults(func=_validate)
