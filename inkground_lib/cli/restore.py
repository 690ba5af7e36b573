"""``inkground restore FILE|URL``: the book's runs from its published results archive
(:mod:`inkground_lib.publish.restore`)."""

from __future__ import annotations

import argparse

from inkground_lib.cli.options import describe


def add_restore_parser(sub) -> None:
    r = sub.add_parser("restore", help="the book's runs from its results archive (a file or an https address)")
    describe(r, "Turn the book's results archive (inkground-results.zip, a download of every page of the book) back "
                "into its runs: every file is checked against the archive's MANIFEST.json (size and sha256) before "
                "anything is written, the executed notebooks go to book/sections/ and the run files to data/runs/, "
                "the datasets are made again here and the benchmark's photos linked. Then `make book` executes no "
                "section whose code and inputs are unchanged, and `inkground run 04 -p n_boot 500` starts at once. "
                "A file here that differs from the archive's is never replaced without --force.")
    r.add_argument("source", nargs="?", help="the archive: a file, or an https address")
    r.add_argument("--published", action="store_true",
                   help="the archive of the book published for this repository (CITATION.cff's repository-code)")
    r.add_argument("--force", action="store_true", help="replace files here that differ from the archive's")
    r.add_argument("--no-datasets", action="store_true",
                   help="restore the files only (no datasets made, nothing checked against make book)")
    r.add_argument("--allow-http-loopback", action="store_true", help=argparse.SUPPRESS)  # tests' own servers
    r.set_defaults(func=_restore)


def _restore(a) -> int:
    from inkground_lib.publish.restore import published_url, report, restore

    if bool(a.source) == bool(a.published):
        raise ValueError("give the archive (a file or an https address) or --published, one of them")
    source = published_url() if a.published else a.source
    print(report(restore(source, force=a.force, datasets=not a.no_datasets,
                         allow_http_loopback=a.allow_http_loopback)))
    return 0
