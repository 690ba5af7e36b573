"""The definitions the paper leaves open, and the paper's settings we follow: each constant defined once.

A section notebook's parameter cell repeats some of these as literals (papermill needs literals); a test
checks that each equals the constant here.
"""

from __future__ import annotations

OCR_THRESHOLD = 0.85
"""A candidate page passes the OCR filter when this share of its words read the same (the paper's value)."""

KEEP_SCORE = 10
"""A pair is kept only if every rater gives this score (the paper's rule)."""

SCORE_RANGE = (0, 10)
"""Raters score a pair from 0 to 10."""

N_RATERS = 85
"""Simulated rater pool (the paper's number of raters)."""

RATERS_PER_PAIR = 2
"""Simulated raters per pair (the paper: at least two)."""

RESERVE_SECONDS = 300.0
"""How long the page offered to a rater stays reserved for them (seconds; ``inkground rate``); renewed while a
rater who has rated looks at it, never for a login that has not rated yet."""

RESERVE_MAX_SECONDS = 1800.0
"""The longest one rater may hold one page unrated however often they reload it (seconds; ``inkground rate``)."""

DIGIT_PAIR_MS = 800
"""``inkground rate``: typing 1 then 0 within this many milliseconds gives the score 10 (the page says so)."""

RATE_HOST = "127.0.0.1"
"""Address the rating app listens on by default: this machine only (``inkground rate``)."""

RATE_PORT = 8765
"""Port the rating app listens on by default (``inkground rate``)."""

DERENDERER = "tracer-recognize"
"""The derenderer that makes section 02's pseudo-labels by default (``inkground pseudo --derenderer``, notebook
02's ``derenderer``, ``inkground paper-scale``): the tracer in its "recognize and derender" mode - given the OCR
reading of each word's crop (the reading the OCR filter makes anyway, read once), never the transcription, as
the paper prompts InkSight "Recognize and derender." Section 02's Table 2.3 measures it closer to the writers'
true pen paths than the skeleton (median DTW, Chamfer and stroke order); on the 46 held-out writers (issue 37,
``benchmarks/results/tracer_eval.txt``) its figures are within a bootstrap interval of "derender with text"
(``tracer``, given the true text). The book's section 02 says so from its own run."""

COMPARED_DERENDERERS = ("skeleton", "tracer-recognize", "tracer")
"""Section 02 measures each of these against the writers' true pen paths (the first is the baseline of the
ratios): the offline derenderers, the tracer in both modes (recognize and derender; derender with text)."""

PAGE_SETS = ("ocr-passed", "all")
"""Which pages a rating session offers (``inkground rate --pages``): those that passed the OCR filter (the
paper's funnel: raters only see those, the default), or every candidate page of the run."""

CROP_GROW = 0.1
"""Word box growth per side (share of its width and height) before derendering and OCR."""

GRID = 50
"""The prompt's numbered grid: G x G cells over the page photo."""

CHECK_TIMEOUT = 15.0
"""Seconds allowed for the model list of one system (``inkground check``); its live request gets the system's
own registry timeout, as in ``predict``."""

MAX_ANSWER_BYTES = 2**20
"""The size limit of one API answer (the response body, bytes; the registry's ``max_answer_bytes`` changes it
per system): a strokes answer for one word is a few kB, so a larger one is a broken or hostile server, stored
cut (status "too_large"), never whole."""

DEADLINE_FAILURES = 3
"""``inkground predict`` stops sending to an API system after this many requests in a row got no complete answer
within the entry's deadline (its ``timeout``), as it stops on a spent quota (exit 130, answers kept, a rerun
resumes): a server that trickles or never answers is given up in K deadlines, not one deadline per word and
attempt. An entry's ``max_deadline_failures`` or ``--max-deadline-failures`` changes it."""

SPACING = 0.05
"""Arc-length resampling step of both inks before DTW and Chamfer, in reference word heights."""

N_BOOT = 1000
"""Page-bootstrap replicates for 95% intervals."""

ORDER_TOL = 0.02
"""Stroke order against the writer's: a stroke whose progress along the writer's path is below the previous
stroke's by more than this (a share of the path) puts the word out of order."""

DIRECTION_TOL = 0.02
"""Stroke direction against the writer's: a stroke that aligns better reversed by more than this (word heights
per point) runs against the writer."""

DIRECTION_MIN_LENGTH = 0.2
"""Only strokes at least this long (word heights) count for the direction check."""

VARIANT_SPACINGS = (0.02, 0.1)
"""Section 04: the resample spacings (word heights) compared with a run's own."""

VARIANT_OCR_ENGINES = ("tesseract", "deepseek-ocr")
"""Section 04: the OCR engines compared with a run's own, where they run here."""

BOOK_SYSTEMS = ("reference", "skeleton", "tracer", "font", "box", "inksight", "gemini-3.1-pro", "claude-opus-4.8",
                "kimi-k3", "qwen3-vl-32b", "molmo-7b-d")
"""Section 03's systems by default: the local ones and every real model of the paper (those that cannot run
here are listed as not run, with what they need)."""

# The metrics are records of one table, core.metric_table.METRICS (name, label, direction, unit, how computed and
# aggregated, CI); every module, report/ included, reads the records (issue 47). (This module imports nothing of the
# library: the dataset builders' code digests hash it.)

BOOK_CANDIDATE_PAGES = 172
"""Synthetic candidate pages ``make book`` generates for section 02 (seed 0); the paper started from 2,984.
The benchmark set section 02 keeps from them must hold at least BOOK_MIN_BENCHMARK pages and words, so that
Style's chance level and the page-bootstrap intervals let the book's tables rank systems (measured
2026-11-30: 158 candidates -> 41 pages, 1,291 words; since the target rule of 2026-12-01 keeps only words
whose text is unique on their page, 158 candidates -> 41 pages, 945 words, too few: hence 172)."""

BOOK_MIN_BENCHMARK = (40, 1000)
"""(pages, words) the default book's benchmark set must reach; ``make book`` says so when it does not."""

# --------------------------------------------------------------------------------------------- read limits
# Every file the library reads as ink or manifest data is checked with os.stat before it is read; a file over
# its limit is refused with an error naming the file, its size and the limit. One mechanism raises a limit
# everywhere: the environment variable named beside it (a number of MiB, 2**20 bytes, e.g.
# INKGROUND_MAX_INK_FILE_MB=1024), which the CLI and the notebooks inherit; in Python a reader's
# ``max_bytes`` keyword (load_dataset: ``max_manifest_bytes`` / ``max_ink_bytes``) overrides both for one call.
#
# The real files these limits must admit (checked 2026-11-30):
# - UNIPEN train_r01_v07: the largest file is include/hpp/data/hpp3/hpb3-sl0.dat, 4,160,437 bytes (git tree
#   of the mirror GitHub GreenCappuccino/train_r01_v07, commit 552a4d44, `git ls-tree -r -l`; 29,226 files,
#   493,625,021 bytes in all). Two blobs of that tree are absent from the stored snapshot
#   (include/hpp/data/hpp2/hpb2-bi.dat, hpb2-sp.dat; their 28 hpp2 siblings are 1.8-3.5 MB); the release was
#   distributed on one CD-ROM (its CDROM-README; unipen.nici.ru.nl/cdroms/), at most 737,280,000 bytes, so
#   those two hold at most 737,280,000 - 493,625,021 = 243,654,979 bytes between them.
# - IAM-OnDB: no per-file or archive size is published: the download page
#   (fki.tic.heia-fr.ch/databases/download-the-iam-on-line-handwriting-database) lists lineStrokes-all.tar.gz,
#   original-xml-all.tar.gz, ascii-all.tar.gz without sizes, and no issue thread found gives one
#   (greydanus/scribe#10, szcom/rnnlib#6 and #21). A lineStrokes file holds one text line and an original-xml
#   file one form of whiteboard ink (same page), so the default rests on the UNIPEN bound above, which
#   holds a whole writer's session in one file.
# The manifest and page inks of our own datasets (measured 2026-11-30 in data/ after `make book`): the largest
# manifest is data/datasets/synth/manifest.json, 850,921 bytes for 158 pages (5.4 kB a page, so the paper's
# 2,984 candidate pages make ~16 MB); the largest page inks file is data/datasets/synth/inks/p0113.json,
# 608,487 bytes.

MAX_INK_FILE_BYTES = 256 * 2**20
"""Largest ink file read, in bytes (256 MiB = 268,435,456): UNIPEN ``.dat`` files and every ``.INCLUDE``d file,
UNIPEN-derived JSON, InkML, IAM-OnDB lineStrokes / original XML / ascii / split files, and a dataset's
``inks/<page>.json``. 64 times the largest UNIPEN file measured (4,160,437 bytes) and above the 243,654,979-byte
bound on the two that could not be measured (see the comment above). Reading takes about 9 bytes of memory a
byte of file (a 1.8 GB file took 16 GB), so a file at the limit needs ~2.3 GB. Raise it with
MAX_INK_FILE_ENV (MiB) or a reader's ``max_bytes`` keyword (bytes)."""

MAX_INK_FILE_ENV = "INKGROUND_MAX_INK_FILE_MB"
"""Environment variable that replaces MAX_INK_FILE_BYTES: a positive number of MiB (2**20 bytes)."""

MAX_XML_DEPTH = 100
"""Deepest element nesting an XML ink file may have (the root is level 1): InkML as producers write it nests
ink > traceGroup > traceGroup > traceGroup > trace (5 levels), IAM-OnDB files 4; deeper files are refused, naming
the file and the element, before any reader walks them (a 5,000-level file stopped a whole build with an
uncaught RecursionError, issue 33)."""

MAX_INK_POINTS = 2_000_000
"""Most points one ink file may hold (InkML traces, counted while the trace text is read, before it is parsed):
at ~46 bytes a point in a page's inks file, 2 M points would write ~90 MB, under MAX_INK_FILE_BYTES; a
10-million-point trace ran 353 s and 5.2 GB and wrote a 462 MiB inks file that validate refused (issue 33).
Real files are far below: a whole IAM-OnDB line has ~1,000-2,000 points."""

MAX_WORD_POINTS = 50_000
"""Most points one word's ink may hold (a word read from InkML or UNIPEN; real words have a few hundred to a few
thousand): a page of 50 such words stays well under MAX_INK_FILE_BYTES when written."""

MAX_WORD_TEXT = 100
"""Longest word text, in characters (the longest English words are under 50): a word read from a file with a
longer text is refused, and a manifest word's text is held to it (issue 33)."""

MAX_ANNOTATION_TEXT = 10_000
"""Longest text an InkML annotation may hold, in characters (a whole page's transcription fits)."""

BOX_TOLERANCE = 0.10
"""How far a word's reference ink may run outside its box, as a share of the box's width (left, right) and height
(top, bottom) on each side: InkSight's crop grows a box by 10% a side (its public notebook), so a derendered ink
can reach that far; ``validate`` refuses a word with fewer than BOX_MIN_INSIDE of its points in the grown box."""

BOX_MIN_INSIDE = 0.5
"""Least share of a word's reference-ink points that must lie in its box grown by BOX_TOLERANCE."""

MAX_MANIFEST_BYTES = 64 * 2**20
"""Largest dataset ``manifest.json`` read, in bytes (64 MiB = 67,108,864): four times the ~16 MB a manifest of
the paper's 2,984 candidate pages takes (5.4 kB a page measured; comment above). Raise it with
MAX_MANIFEST_ENV (MiB) or load_dataset's ``max_manifest_bytes`` keyword (bytes)."""

MAX_MANIFEST_ENV = "INKGROUND_MAX_MANIFEST_MB"
"""Environment variable that replaces MAX_MANIFEST_BYTES: a positive number of MiB (2**20 bytes)."""

MAX_ARCHIVE_BYTES = 2 * 2**30
"""Most bytes a zip archive may hold unpacked, in bytes (2 GiB = 2,147,483,648), and the largest archive file
read (core.archive; the book's results archive, ``verify`` and ``restore``): the results archive holds the CSV and
JSON of the book's runs and datasets, ~29 MB at the book's scale (data/ measured 2026-11 at ed2f909), so ~550 MB
at the paper's 2,984 candidate pages (x 2984 / 158 pages); 2 GiB is four times that. Checking streams every member
(bounded memory), ~2 GiB of sha256 and inflate in well under a minute. Raise it with MAX_ARCHIVE_ENV (MiB) or the
reader's ``max_bytes`` keyword (bytes)."""

MAX_ARCHIVE_ENV = "INKGROUND_MAX_ARCHIVE_MB"
"""Environment variable that replaces MAX_ARCHIVE_BYTES: a positive number of MiB (2**20 bytes)."""

MAX_ARCHIVE_MEMBERS = 100_000
"""Most members a zip archive may list (core.archive refuses more before its directory is parsed: each costs
Python ~0.5 kB): the results archive of the book holds ~220 files, ~3,100 at the paper's scale."""

MAX_PAGE_SIDE = 12000
"""Largest page side in px (a 12,000 x 12,000 photo is ~430 MB as RGB; phone photos are ~4,000-8,000 px): the
synthetic generator's bound on the pages it writes, and load_dataset's on a manifest's width / height."""

MAX_PAGE_PIXELS = MAX_PAGE_SIDE * MAX_PAGE_SIDE
"""PIL's decompression-bomb limit (``PIL.Image.MAX_IMAGE_PIXELS``, pixels) wherever core.dataset opens a page
photo: PIL warns above it and raises above twice it (Pillow docs, Image.open, checked 2026-11-30; PIL's
default, 89,478,485, would flag a valid 12,000 x 12,000 page); a photo with a side over MAX_PAGE_SIDE is refused
before it is decoded."""

# --------------------------------------------------------------------------------------------- the paper's scale

PAPER_CANDIDATE_PAGES = 2984
"""The paper's candidate pages (before the OCR and rater filters): ``inkground paper-scale`` generates this many."""

PAPER_SCALE_SEED = 1
"""Seed of the paper-scale synthetic candidates (``inkground synth --pages 2984 --seed 1`` in the README)."""

PAPER_SCALE_SYSTEMS = ("reference", "skeleton", "font", "box")
"""The local systems ``inkground paper-scale`` predicts and scores (every one runs offline)."""

JOBS_IN_FLIGHT = 4
"""Jobs submitted ahead per worker by :func:`inkground_lib.core.parallel.windowed_map` (enough to keep each
worker busy while the driver writes results; few enough that no scheduler holds every page at once)."""

OCR_BATCH_WORDS = 64
"""Renders per job when section 03's OCR of predictions runs on an executor (one job ~1-2 s of RapidOCR)."""

STYLE_JOB_BATCHES = 8
"""Inference batches (of the classifier's ``eval_batch_size``) per job when the Style of renders is computed on an
executor (one job: 512 renders, ~3 s on one core); whole batches, so each batch holds the renders it holds in
this process and the probabilities are the same."""
