"""XML readers refuse DTDs, entities and external references in every encoding (UTF-8, UTF-16 and UTF-32, both
byte orders, with and without a byte-order mark), and still read the same documents without a DTD."""

from __future__ import annotations

import codecs
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from inkground_lib.formats.iamondb import read_iamondb
from inkground_lib.formats.iamondb_strokes import read_iamondb_strokes
from inkground_lib.formats.iamondb_transcriptions import read_iamondb_original
from inkground_lib.formats.inkml import read_inkml
from inkground_lib.formats.xmlsafe import FormatError, parse_xml

ROOT = Path(__file__).resolve().parents[1]
MARKER = "INKGROUND-SECRET-MARKER-7f3a"

# (name, codec, byte-order mark, encoding declared with the mark, declared without it)
ENCODINGS = [
    ("utf-8", "utf-8", codecs.BOM_UTF8, "UTF-8", "UTF-8"),
    ("utf-16-le", "utf-16-le", codecs.BOM_UTF16_LE, "UTF-16", "UTF-16LE"),
    ("utf-16-be", "utf-16-be", codecs.BOM_UTF16_BE, "UTF-16", "UTF-16BE"),
    ("utf-32-le", "utf-32-le", codecs.BOM_UTF32_LE, "UTF-32", "UTF-32LE"),
    ("utf-32-be", "utf-32-be", codecs.BOM_UTF32_BE, "UTF-32", "UTF-32BE"),
]
ENC_IDS = [e[0] for e in ENCODINGS]

# Each document: {dtd} is where a DOCTYPE goes, {lol} an internal entity reference placed where the reader puts
# text into its output, {ext} an external one placed in element content. Non-ASCII text checks the decoding.
INKML = ('<ink xmlns="http://www.w3.org/2003/InkML"><traceGroup xml:id="g1">'
         '<annotation type="truth">h\u00e9llo{lol}{ext}</annotation><trace>0 0, 10 5, 20 0</trace>'
         '</traceGroup></ink>')
IAM_STROKES = ('<WhiteboardCaptureSession><StrokeSet>{ext}<Stroke>{lol}<Point x="1" y="2" time="0.5"/>'
               '<Point x="3" y="4" time="0.51"/></Stroke></StrokeSet></WhiteboardCaptureSession>')
IAM_ORIGINAL = ('<WhiteboardCaptureSession><General><Form id="a01-000u" writerID="10158"/></General>'
                '<Transcription>{ext}<TextLine id="a01-000u-01" text="A M\u00d6VE{lol}"/></Transcription>'
                '</WhiteboardCaptureSession>')


def _billion_laughs(root: str, _secret: Path) -> str:
    ents = [f'<!ENTITY lol0 "{MARKER}">'] + [
        f'<!ENTITY lol{k} "{"".join(f"&lol{k - 1};" for _ in range(10))}">' for k in range(1, 5)]
    return f"<!DOCTYPE {root} [{''.join(ents)}]>"


def _external_entity(root: str, secret: Path) -> str:
    return f'<!DOCTYPE {root} [<!ENTITY ext SYSTEM "{secret.as_uri()}">]>'


def _external_dtd(root: str, secret: Path) -> str:
    return f'<!DOCTYPE {root} SYSTEM "{secret.with_suffix(".dtd").as_uri()}">'


ATTACKS = {"billion-laughs": (_billion_laughs, "&lol4;", ""),
           "external-entity": (_external_entity, "", "&ext;"),
           "external-dtd": (_external_dtd, "", "")}


def _encode(text: str, enc: tuple, bom: bool) -> bytes:
    _, codec, mark, decl_bom, decl_plain = enc
    doc = f'<?xml version="1.0" encoding="{decl_bom if bom else decl_plain}"?>\n{text}'
    return (mark if bom else b"") + doc.encode(codec)


def _secret(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_text(MARKER + "\n", "utf-8")
    secret.with_suffix(".dtd").write_text(f'<!ENTITY ext "{MARKER}">\n', "utf-8")
    return secret


def _document(template: str, root: str, attack: str | None, secret: Path) -> str:
    if attack is None:
        return template.format(lol="", ext="")
    make, lol, ext = ATTACKS[attack]
    return make(root, secret) + "\n" + template.format(lol=lol, ext=ext)


def _read_iamondb_folder(path: Path):
    """read_iamondb over a one-line IAM-OnDB folder holding ``path`` as its lineStrokes file."""
    root = path.parent / "IAM-OnDB"
    d = root / "lineStrokes" / "a01" / "a01-000"
    d.mkdir(parents=True, exist_ok=True)
    target = d / "a01-000u-01.xml"
    target.write_bytes(path.read_bytes())
    return target, read_iamondb(root)


READERS = {
    "inkml": (INKML, "ink", read_inkml),
    "iamondb-strokes": (IAM_STROKES, "WhiteboardCaptureSession", read_iamondb_strokes),
    "iamondb-original": (IAM_ORIGINAL, "WhiteboardCaptureSession", read_iamondb_original),
    "iamondb-folder": (IAM_STROKES, "WhiteboardCaptureSession", None),
}


def _run(reader: str, path: Path):
    """(the file the error must name, the reader's result)."""
    fn = READERS[reader][2]
    if fn is None:
        return _read_iamondb_folder(path)
    return path, fn(path)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
@pytest.mark.parametrize("bom", [True, False], ids=["bom", "no-bom"])
@pytest.mark.parametrize("enc", ENCODINGS, ids=ENC_IDS)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_dtd_refused_in_every_encoding(tmp_path, capsys, reader, enc, bom, attack):
    template, root, _ = READERS[reader]
    secret = _secret(tmp_path)
    path = tmp_path / f"doc-{reader}-{enc[0]}.xml"
    path.write_bytes(_encode(_document(template, root, attack, secret), enc, bom))
    named = path
    if reader == "iamondb-folder":
        named = tmp_path / "IAM-OnDB" / "lineStrokes" / "a01" / "a01-000" / "a01-000u-01.xml"
    with pytest.raises(FormatError) as e:
        _run(reader, path)
    msg = str(e.value)
    assert msg.startswith(f"{named}: refused: ") and "document type declaration" in msg, msg
    out = capsys.readouterr()
    for text in (msg, repr(e.value), out.out, out.err):
        assert MARKER not in text


@pytest.mark.parametrize("bom", [True, False], ids=["bom", "no-bom"])
@pytest.mark.parametrize("enc", ENCODINGS, ids=ENC_IDS)
def test_documents_without_dtd_still_read(tmp_path, enc, bom):
    secret = _secret(tmp_path)
    p = tmp_path / "doc.inkml"
    p.write_bytes(_encode(_document(INKML, "ink", None, secret), enc, bom))
    groups = read_inkml(p)
    assert [(g.id, g.text) for g in groups] == [("g1", "h\u00e9llo")]
    assert groups[0].ink.points()[:, :2].tolist() == [[0, 0], [10, 5], [20, 0]]

    p = tmp_path / "a01-000u-01.xml"
    p.write_bytes(_encode(_document(IAM_STROKES, "WhiteboardCaptureSession", None, secret), enc, bom))
    ink = read_iamondb_strokes(p)
    assert ink.strokes[0].tolist() == [[1, 2, 0], [3, 4, 10]]
    _, lines = _read_iamondb_folder(p)
    assert [(ln.id, ln.ink.n_points) for ln in lines] == [("a01-000u-01", 2)]

    p = tmp_path / "a01-000u.xml"
    p.write_bytes(_encode(_document(IAM_ORIGINAL, "WhiteboardCaptureSession", None, secret), enc, bom))
    form = read_iamondb_original(p)
    assert (form.id, form.writer, form.lines) == ("a01-000u", "10158", {"a01-000u-01": "A M\u00d6VE"})


def test_attack_documents_are_live(tmp_path):
    """The refused documents are real attacks: a plain expat parser expands the entities into the text."""
    secret = _secret(tmp_path)
    for enc in ENCODINGS[:3]:
        for bom in (True, False):
            data = _encode(_document(INKML, "ink", "billion-laughs", secret), enc, bom)
            text = "".join(ET.fromstring(data).itertext())
            assert text.count(MARKER) == 10 ** 4


def test_external_entity_not_fetched_even_with_dtd_allowed(tmp_path):
    """Belt and braces: the parser forbids external references on its own too (forbid_external)."""
    import defusedxml
    import defusedxml.ElementTree as DET

    secret = _secret(tmp_path)
    data = _encode(_document(INKML, "ink", "external-entity", secret), ENCODINGS[0], False)
    with pytest.raises(defusedxml.DefusedXmlException) as e:
        DET.fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    assert MARKER not in str(e.value)


def test_no_regex_fallback_without_defusedxml(tmp_path, monkeypatch):
    p = tmp_path / "plain.inkml"
    p.write_text(_document(INKML, "ink", None, tmp_path / "x"), "utf-8")
    assert parse_xml(p) is not None
    monkeypatch.setitem(sys.modules, "defusedxml", None)
    monkeypatch.setitem(sys.modules, "defusedxml.ElementTree", None)
    with pytest.raises(FormatError, match=rf"^{re.escape(str(p))}: not read: .*defusedxml.* not installed"):
        parse_xml(p)


def test_requirements_pin_defusedxml():
    from inkground_lib.publish.lock import read_lock

    assert re.fullmatch(r"\d+(\.\d+)+", read_lock()["defusedxml"])


_RAW_XML = re.compile(r"\b(?:ET|ElementTree|etree)\.(?:parse|fromstring|fromstringlist|iterparse|XML|XMLParser|"
                      r"XMLPullParser)\b|\bxml\.(?:dom|sax|parsers)\b|\bminidom\b|\blxml\b|\bpyexpat\b")


def test_only_parse_xml_parses_xml():
    """No module of the library parses XML except through formats.xmlsafe.parse_xml."""
    lib = ROOT / "inkground_lib"
    offenders = []
    for f in sorted(lib.rglob("*.py")):
        if f == lib / "formats" / "xmlsafe.py":
            continue
        for i, line in enumerate(f.read_text("utf-8").splitlines(), 1):
            if _RAW_XML.search(line):
                offenders.append(f"{f.relative_to(ROOT)}:{i}: {line.strip()}")
    assert offenders == []
    assert _RAW_XML.search("root = ET.fromstring(data)") and _RAW_XML.search("from xml.dom import minidom")
