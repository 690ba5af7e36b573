"""The README's table of contents lists every section and subsection, and each of its links finds its heading
(GitHub's anchors: lower case, spaces to hyphens, punctuation dropped) (issue 36)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9 \-]", "", title.lower()).replace(" ", "-")


def _headings(text: str) -> list[tuple[int, str]]:
    out, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^(##+) (.+)$", line)
        if m and len(m[1]) <= 3 and m[2] != "Contents":
            out.append((len(m[1]), m[2].strip()))
    return out


def test_the_contents_list_every_heading_in_order_and_every_link_resolves():
    text = README.read_text("utf-8")
    contents = text.split("## Contents", 1)[1].split("\n## ", 1)[0]
    links = re.findall(r"^( *)- \[(.+?)\]\(#(.+?)\)$", contents, re.M)
    listed = [(2 if not indent else 3, title) for indent, title, _ in links]
    assert listed == _headings(text), "README: the Contents list and the headings differ"
    anchors = {_anchor(t) for _, t in _headings(text)}
    assert all(a in anchors for _, _, a in links)
    assert all(f"(#{a})" in text for a in re.findall(r"\]\(#([a-z0-9-]+)\)", text) if a in anchors)
    assert text.index("## Datasets") < text.index("## Models")  # provider details after the datasets
