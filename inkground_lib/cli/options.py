"""Options several ``inkground`` commands share."""

from __future__ import annotations


def overwrite_option(parser) -> None:
    parser.add_argument("--overwrite", action="store_true",
                        help="write into a non-empty folder that inkground did not create (its files are kept: "
                             "inkground never deletes what it did not write)")
