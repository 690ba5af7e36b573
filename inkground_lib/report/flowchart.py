"""The paper summary's Mermaid flowchart lines as prose, for the reviewers' page."""

from __future__ import annotations

import re
from typing import Mapping

_MERMAID_NODE = re.compile(r"\b([A-Z]\w*)\s*(?:\[([^\]]*)\]|\{([^}]*)\})")


def flowchart_labels(text: str) -> dict[str, str]:
    """Mermaid node id -> its label, from every node definition (A[...], C{...}) in ``text``."""
    out: dict[str, str] = {}
    for line in str(text).splitlines():
        if "-->" in line or re.match(r"^\s*[A-Z]\w*\s*[\[{]", line):
            for m in _MERMAID_NODE.finditer(line):
                out.setdefault(m.group(1), (m.group(2) if m.group(2) is not None else m.group(3)).strip())
    return out


def is_mermaid(sentence: str) -> bool:
    return "-->" in sentence or bool(re.fullmatch(r"\s*[A-Z]\w*\s*(\[[^\]]*\]|\{[^}]*\})\s*", sentence))


def readable_sentence(sentence: str, labels: Mapping[str, str] | None = None) -> str:
    """A claim sentence as prose: a Mermaid flowchart line becomes 'Flowchart: <label> (edge) → <label>'
    (node ids resolved through ``labels``); any other sentence is returned unchanged."""
    if not is_mermaid(sentence):
        return sentence
    labels = dict(labels or {})

    def node(part: str) -> str:
        m = _MERMAID_NODE.search(part)
        if m:
            return (m.group(2) if m.group(2) is not None else m.group(3)).strip()
        return labels.get(part.strip(), part.strip())

    steps = []
    for part in sentence.split("-->"):
        part = part.strip()
        if " -- " in part:
            who, edge = part.split(" -- ", 1)
            steps.append(f"“{node(who)}” ({edge.strip()})")
        else:
            steps.append(f"“{node(part)}”")
    return "Flowchart: " + " → ".join(steps)
