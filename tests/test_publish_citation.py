"""One place for the repository's address (CITATION.cff); the files that repeat it are written from it and
checked against it; BibTeX from CITATION.cff (issue 35)."""
import shutil
import tomllib

import pytest
import yaml

from inkground_lib.core.layout import ROOT
from inkground_lib.publish import citation


def _copy(tmp_path):
    for f in ("CITATION.cff", "_config.yml", "pyproject.toml"):
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
    sw, paper = db.entries["inkground_companion"], db.entries["inkground_paper"]
    assert sw.type == "software" and sw.fields["title"].replace("{", "").replace("}", "") == cff["title"]
    assert sw.fields["version"] == cff["version"] and sw.fields["year"] == str(cff["date-released"])[:4]
    assert "url" not in sw.fields  # no address set
    assert paper.fields["title"] == " ".join(cff["references"][0]["title"].split())
    (root / "CITATION.cff").write_text((root / "CITATION.cff").read_text().replace(
        "version: 0.1.0", "version: 0.2.0") + "repository-code: https://example.org/x/inkground\n")
    sw = parse_string(citation.bibtex(root), "bibtex").entries["inkground_companion"]
    assert sw.fields["version"] == "0.2.0" and sw.fields["url"] == "https://example.org/x/inkground"
