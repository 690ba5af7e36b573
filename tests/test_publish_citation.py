"""One place for the repository's address (CITATION.cff); the files that repeat it are written from it and
checked against it; BibTeX from CITATION.cff (issue 35)."""
import shutil
import tomllib

import pytest
import yaml

from inkground_lib.core.layout import ROOT
from inkground_lib.publish import citation


def _copy(tmp_path):
    for f in ("CITATION.cff", "_config.yml", "pyproject.toml", "book/references.bib"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / f, tmp_path / f)
    return tmp_path


def test_the_repository_agrees_with_citation_cff():
    assert citation.problems(ROOT) == []


def test_setting_the_address_turns_buttons_on_and_unsetting_turns_them_off(tmp_path):
    root = _copy(tmp_path)
    cff = root / "CITATION.cff"
    cff.write_text(cff.read_text() + "repository-code: https://github.com/someone/inkground\n")
    found = citation.problems(root)
    assert any("repository.url" in p for p in found) and any("pyproject.toml" in p for p in found)
    citation.sync(root)
    assert citation.problems(root) == []
    cfg = yaml.safe_load((root / "_config.yml").read_text())
    assert cfg["repository"] == {"url": "https://github.com/someone/inkground", "branch": "main"}
    assert cfg["html"]["use_repository_button"] is True and cfg["html"]["use_issues_button"] is True
    assert cfg["launch_buttons"]["binderhub_url"] == citation.BINDERHUB_URL
    assert cfg["sphinx"]["config"]["html_context"] == {"default_mode": "light"}  # the rest kept
    py = tomllib.loads((root / "pyproject.toml").read_text())
    assert py["project"]["urls"] == {"Source": "https://github.com/someone/inkground"}
    assert py["project"]["scripts"]  # kept
    # the front page's reader finds the same address
    from inkground_lib.report.front_numbers import configured_repository
    assert configured_repository(root)[0] == "https://github.com/someone/inkground"
    cff.write_text(cff.read_text().replace("repository-code: https://github.com/someone/inkground\n", ""))
    citation.sync(root)
    cfg = yaml.safe_load((root / "_config.yml").read_text())
    assert "repository" not in cfg and cfg["html"]["use_repository_button"] is False
    assert cfg["launch_buttons"]["binderhub_url"] == "" and citation.problems(root) == []
    assert "urls" not in tomllib.loads((root / "pyproject.toml").read_text())["project"]


def test_a_bad_address_is_named(tmp_path):
    root = _copy(tmp_path)
    (root / "CITATION.cff").write_text((root / "CITATION.cff").read_text() + "repository-code: not a url\n")
    with pytest.raises(citation.CitationError, match="repository-code 'not a url'"):
        citation.repository(root)


def test_bibtex_from_citation_cff(tmp_path):
    """The BibTeX parses (pybtex, as sphinxcontrib-bibtex reads it) and carries CITATION.cff's fields."""
    from pybtex.database import parse_string

    root = _copy(tmp_path)
    cff = yaml.safe_load((root / "CITATION.cff").read_text())
    db = parse_string(citation.bibtex(root), "bibtex")
    sw, paper = db.entries["inkground_companion"], db.entries["inkground"]
    assert sw.type == "software" and sw.fields["title"].replace("{", "").replace("}", "") == cff["title"]
    assert sw.fields["version"] == cff["version"] and sw.fields["year"] == str(cff["date-released"])[:4]
    assert "url" not in sw.fields  # no address set
    assert paper.fields["title"].replace("{", "").replace("}", "") == " ".join(cff["references"][0]["title"].split())
    (root / "CITATION.cff").write_text((root / "CITATION.cff").read_text().replace(
        "version: 0.1.0", "version: 0.2.0") + "repository-code: https://example.org/x/inkground\n")
    sw = parse_string(citation.bibtex(root), "bibtex").entries["inkground_companion"]
    assert sw.fields["version"] == "0.2.0" and sw.fields["url"] == "https://example.org/x/inkground"


def test_one_key_for_the_paper_and_titles_that_keep_their_case(tmp_path):
    """The downloadable BibTeX and the book's bibliography cite the paper by one key with one entry; a style that
    changes the case of titles (plain: sentence case) keeps "inkground" and "inkGround" (brace protection)."""
    from pybtex.database import parse_file, parse_string
    from pybtex.plugin import find_plugin

    db = parse_string(citation.bibtex(ROOT), "bibtex")
    assert sorted(db.entries) == ["inkground", "inkground_companion"]
    book = parse_file(str(ROOT / citation.BOOK_BIB), "bibtex")
    assert db.entries["inkground"].fields == book.entries["inkground"].fields
    paper_words = "Benchmarking Fine-grained Visual Grounding"
    assert [k for k, e in book.entries.items() if paper_words in e.fields.get("title", "")] == ["inkground"]
    style = find_plugin("pybtex.style.formatting", "plain")()
    text = " ".join(e.text.render_as("text") for e in style.format_entries(db.entries.values()))
    assert "inkground: a reproducible companion to inkGround" in text and "{inkGround}: Benchmarking" not in text
    assert "InkGround" not in text and "Inkground" not in text
    # the check can fail: a second entry for the paper under another key is refused
    root = _copy(tmp_path)
    bib = root / citation.BOOK_BIB
    bib.write_text(bib.read_text() + "\n@misc{inkground_paper,\n  title = {inkGround: Benchmarking Fine-grained "
                   "Visual Grounding Capabilities of Vision-Language Models}\n}\n")
    with pytest.raises(citation.CitationError, match="more than one entry for the paper"):
        citation.bibtex(root)


def test_citation_cff_is_valid_cff_1_2_0(tmp_path):
    assert citation.cff_problems(ROOT) == []
    root = _copy(tmp_path)
    cff = root / "CITATION.cff"
    cff.write_text(cff.read_text().replace('date-released: "2026-11-30"', "date-released: 30 November 2026")
                   .replace("cff-version: 1.2.0", "cff-version: 1.2.0\nno-such-key: 1"))
    found = citation.cff_problems(root)
    assert any(p.startswith("date-released:") for p in found), found
    assert any("no-such-key" in p for p in found), found
