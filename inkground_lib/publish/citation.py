"""The repository's address and its citation, from one place: CITATION.cff.

``repository-code`` in CITATION.cff (Citation File Format 1.2.0: "the URL of the work's source code repository")
is the only place the address is written by hand. ``make citation`` writes it into the two files that need it
too, and ``make citation CHECK=1`` (run by the tests) fails when they disagree:

* _config.yml: ``repository.url``, and the repository, issues and launch buttons (Binder, Colab) turned on
  while an address is set, off while none is;
* pyproject.toml: ``[project.urls] Source``.

The front page (:mod:`inkground_lib.report.front`) reads the address with :func:`repository` and the
citations with :func:`bibtex` and :func:`cff_text`; unset, the book says how to run it from a copy.

    python -m inkground_lib.publish.citation [--check]
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from inkground_lib.core.layout import ROOT

CFF = "CITATION.cff"
BINDERHUB_URL = "https://mybinder.org"
"""Where the launch button sends a reader once the repository has an address (Jupyter Book 1.x
``launch_buttons.binderhub_url``); nothing is fetched from it while the book is read. Binder builds the
repository with repo2docker from ``binder/`` (the lock, this package, then ``inkground restore --published``: the
book's runs from its published results archive), so the section it opens is ready to rerun. Colab's button stays
off: Colab opens a notebook alone, without the repository's environment or the book's runs, and the section
notebooks hold no setup cell to fetch them."""


class CitationError(ValueError):
    """CITATION.cff cannot be read, or another file disagrees with it."""


@dataclass(frozen=True)
class Citation:
    """What CITATION.cff says of the companion and of the paper it reproduces."""

    title: str
    version: str
    date: str  # "2026-11-30"
    authors: list[str]
    license: str
    repository: str | None  # repository-code, or None
    paper_title: str
    paper_authors: list[str]


def _names(people) -> list[str]:
    out = []
    for a in people or []:
        if isinstance(a, dict):
            name = a.get("name") or " ".join(x for x in (a.get("given-names"), a.get("family-names")) if x)
            if name:
                out.append(str(name).strip())
    return out


def pages_address(repository_url: str | None) -> str | None:
    """Where GitHub Pages serves a GitHub repository's site (``https://github.com/OWNER/NAME`` ->
    ``https://owner.github.io/NAME/``; a repository named ``OWNER.github.io`` is served at the root), None for
    another host or no address (GitHub's "About GitHub Pages": project sites at
    ``http(s)://<owner>.github.io/<repositoryname>``, read 2026-12-06).

    >>> pages_address("https://github.com/Some-One/inkground")
    'https://some-one.github.io/inkground/'
    """
    m = re.fullmatch(r"https://github\.com/([A-Za-z0-9-]+)/([A-Za-z0-9._-]+?)(?:\.git)?/?", repository_url or "")
    if m is None:
        return None
    owner, name = m.group(1).lower(), m.group(2)
    return f"https://{owner}.github.io/" if name.lower() == f"{owner}.github.io" else \
        f"https://{owner}.github.io/{name}/"


def read_citation(root: Path = ROOT) -> Citation:
    """CITATION.cff of ``root``; CitationError names the file and what is wrong."""
    import yaml

    path = Path(root) / CFF
    try:
        d = yaml.safe_load(path.read_text("utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise CitationError(f"{path} cannot be read: {e}") from None
    if not isinstance(d, dict) or not d.get("title"):
        raise CitationError(f"{path}: no title")
    url = d.get("repository-code")
    if url is not None and not (isinstance(url, str) and re.fullmatch(r"https?://\S+", url.strip())):
        raise CitationError(f"{path}: repository-code {url!r} is not an http(s) address")
    paper = next((r for r in d.get("references") or [] if isinstance(r, dict)), {})
    return Citation(title=str(d["title"]).strip(), version=str(d.get("version") or ""),
                    date=str(d.get("date-released") or ""), authors=_names(d.get("authors")),
                    license=str(d.get("license") or ""), repository=url.strip().rstrip("/") if url else None,
                    paper_title=" ".join(str(paper.get("title") or "").split()),
                    paper_authors=_names(paper.get("authors")))


def repository(root: Path = ROOT) -> str | None:
    """The repository's address (CITATION.cff ``repository-code``), or None where none is set."""
    return read_citation(root).repository


def _bib_escape(text: str) -> str:
    return re.sub(r"([&%$#_{}])", r"\\\1", text)


BOOK_BIB = "book/references.bib"
PAPER_KEY = "inkground"
"""The paper's one BibTeX key: the book cites it (``{cite}`inkground```) and the downloadable BibTeX carries the
same entry, taken from :data:`BOOK_BIB`."""


def paper_entry(root: Path = ROOT) -> str:
    """The paper's entry (:data:`PAPER_KEY`) as book/references.bib writes it, its ``@`` line to its closing
    brace; CitationError when the file has none, or more than one entry for the paper's title."""
    path = Path(root) / BOOK_BIB
    text = path.read_text("utf-8")
    m = re.search(rf"^@\w+\{{{PAPER_KEY},\n.*?^\}}\n", text, re.M | re.S)
    if m is None:
        raise CitationError(f"{path}: no entry {PAPER_KEY!r} for the paper")
    title = read_citation(root).paper_title
    key_words = " ".join(title.split()[1:6]).lower()  # a second entry for the same paper under another key
    if sum(key_words in " ".join(e.replace("{", "").replace("}", "").split()).lower()
           for e in re.split(r"^@", text, flags=re.M)) > 1:
        raise CitationError(f"{path}: more than one entry for the paper {title!r}; keep one, keyed {PAPER_KEY!r}")
    return m.group(0)


def bibtex(root: Path = ROOT) -> str:
    """BibTeX for the companion (``@software``, from CITATION.cff) and the paper (book/references.bib's entry
    :data:`PAPER_KEY`, the key the book cites: one key for the paper wherever it is cited). Titles and the
    corporate author are brace-protected, so a style that changes case keeps "inkground" and "inkGround".

    >>> print(bibtex().split("\\n")[0])
    @software{inkground_companion,
    """
    c = read_citation(root)
    companion = [f"  title = {{{{{_bib_escape(c.title)}}}}}",
                 f"  author = {{{' and '.join('{' + _bib_escape(a) + '}' for a in c.authors)}}}",
                 f"  version = {{{_bib_escape(c.version)}}}", f"  year = {{{c.date[:4]}}}",
                 f"  date = {{{c.date}}}", f"  license = {{{_bib_escape(c.license)}}}"]
    if c.repository:
        companion.append(f"  url = {{{c.repository}}}")
    return "@software{inkground_companion,\n" + ",\n".join(companion) + "\n}\n\n" + paper_entry(root)


CFF_SCHEMA = Path(__file__).with_name("cff-1.2.0.schema.json")
"""The Citation File Format 1.2.0 JSON schema, as published in citation-file-format/citation-file-format
(schema.json at tag 1.2.0, CC-BY-4.0; read through the search tool 2026-12-06)."""


def cff_problems(root: Path = ROOT) -> list[str]:
    """Where CITATION.cff breaks the CFF 1.2.0 schema (:data:`CFF_SCHEMA`), each as "<field path>: <message>"
    ([] when it is valid); YAML read safely, the schema checked with jsonschema's Draft 7 validator."""
    import json

    import jsonschema
    import yaml

    data = yaml.safe_load((Path(root) / CFF).read_text("utf-8"))
    validator = jsonschema.Draft7Validator(json.loads(CFF_SCHEMA.read_text("utf-8")),
                                           format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
            for e in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))]


def cff_text(root: Path = ROOT) -> str:
    """CITATION.cff as it is (the CFF citation of the companion, which lists the paper under references)."""
    return (Path(root) / CFF).read_text("utf-8")


# ----------------------------------------------------------------------- the files that repeat the address

def _config_values(url: str | None) -> dict:
    """The _config.yml settings that follow from the address: {dotted key: value}."""
    on = bool(url)
    return {"repository.url": url, "repository.branch": "main" if on else None,
            "html.use_repository_button": on, "html.use_issues_button": on,
            "launch_buttons.binderhub_url": BINDERHUB_URL if on else "",
            "launch_buttons.colab_url": ""}


def _get(d: dict, dotted: str):
    for k in dotted.split("."):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def problems(root: Path = ROOT) -> list[str]:
    """Where _config.yml or pyproject.toml disagree with CITATION.cff ([] when they agree)."""
    import tomllib

    import yaml

    root = Path(root)
    url = repository(root)
    out = []
    cfg = yaml.safe_load((root / "_config.yml").read_text("utf-8")) or {}
    for key, want in _config_values(url).items():
        have = _get(cfg, key)
        if (have or None) != (want or None):
            out.append(f"_config.yml {key} is {have!r}, CITATION.cff makes it {want!r}")
    urls = (tomllib.loads((root / "pyproject.toml").read_text("utf-8")).get("project") or {}).get("urls") or {}
    if (urls.get("Source") or None) != url:
        out.append(f"pyproject.toml [project.urls] Source is {urls.get('Source')!r}, CITATION.cff makes it {url!r}")
    return out


_CONFIG_BLOCK = re.compile(r"^# >>> repository \(make citation\).*?^# <<< repository\n", re.M | re.S)
_PYPROJECT_BLOCK = re.compile(r"^# >>> urls \(make citation\).*?^# <<< urls\n", re.M | re.S)


def _set_key(text: str, section: str, key: str, value) -> str:
    """Set ``key: value`` inside the top-level YAML mapping ``section`` of _config.yml (two-space indented)."""
    import json

    rendered = "false" if value is False else "true" if value is True else json.dumps(value)
    head = re.search(rf"^{section}:\n((?:  .*\n|#.*\n|\n)*)", text, re.M)
    if head is None:
        return text.rstrip("\n") + f"\n{section}:\n  {key}: {rendered}\n"
    body = head.group(1)
    line = re.compile(rf"^  {re.escape(key)}:.*$", re.M)
    body = line.sub(f"  {key}: {rendered}", body, count=1) if line.search(body) else f"  {key}: {rendered}\n" + body
    return text[:head.start(1)] + body + text[head.end(1):]


def sync(root: Path = ROOT) -> list[str]:
    """Write the address of CITATION.cff into _config.yml and pyproject.toml; returns what changed."""
    root = Path(root)
    before = problems(root)
    url = repository(root)
    cfg_path = root / "_config.yml"
    text = cfg_path.read_text("utf-8")
    block = ("# >>> repository (make citation): written from CITATION.cff's repository-code; edit it there\n" +
             (f"repository:\n  url: {url}\n  branch: main\n" if url else
              "# (no repository-code in CITATION.cff: no repository, issues or launch buttons)\n") +
             "# <<< repository\n")
    text = _CONFIG_BLOCK.sub(lambda m: block, text) if _CONFIG_BLOCK.search(text) else text.rstrip("\n") + "\n" + block
    for key, value in _config_values(url).items():
        section, name = key.split(".", 1)
        if section in ("html", "launch_buttons"):
            text = _set_key(text, section, name, value)
    cfg_path.write_text(text, "utf-8")
    py_path = root / "pyproject.toml"
    py = py_path.read_text("utf-8")
    urls = ("# >>> urls (make citation): CITATION.cff's repository-code\n" +
            (f'[project.urls]\nSource = "{url}"\n' if url else "") + "# <<< urls\n")
    if _PYPROJECT_BLOCK.search(py):
        py = _PYPROJECT_BLOCK.sub(lambda m: urls, py)
    else:
        py = py.replace("\n[project.scripts]", "\n" + urls + "\n[project.scripts]", 1)
    py_path.write_text(py, "utf-8")
    left = problems(root)
    if left:
        raise CitationError("after writing, still: " + "; ".join(left))
    return before


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--check" in argv:
        found = [f"{CFF} {p}" for p in cff_problems()] + problems()
        for p in found:
            print(p)
        print("CITATION.cff is valid CFF 1.2.0; the repository's address agrees in CITATION.cff, _config.yml and "
              "pyproject.toml" if not found else "mend CITATION.cff, or run `make citation` to write its address "
              "into the others")
        return 1 if found else 0
    changed = sync()
    print("\n".join(changed) if changed else "nothing to change")
    return 0


if __name__ == "__main__":
    sys.exit(main())
