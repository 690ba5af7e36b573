"""Safe XML parsing shared by the XML readers, and the error every format reader raises."""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

from inkground_lib.core.dataset import check_file_size
from inkground_lib.core.defaults import MAX_INK_FILE_BYTES, MAX_INK_FILE_ENV, MAX_XML_DEPTH

XML_ID = "{http://www.w3.org/XML/1998/namespace}id"


class FormatError(ValueError):
    """A file that cannot be read in the format it claims; the message names file and element / field."""


def finite_number(text: str, where: str, what: str | None = None) -> float:
    """``text`` as a finite float; FormatError "<where>: <what> is not a (finite) number" otherwise
    (``what`` defaults to the text's repr, cut to 30 characters). Shared by the format readers.

    >>> finite_number(" 2.5", "f:1")
    2.5
    >>> finite_number("nan", "f:1")
    Traceback (most recent call last):
    ...
    inkground_lib.formats.xmlsafe.FormatError: f:1: 'nan' is not a finite number
    """
    what = f"{text!r:.30}" if what is None else what
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise FormatError(f"{where}: {what} is not a number") from None
    if not math.isfinite(v):
        raise FormatError(f"{where}: {what} is not a finite number")
    return v


# XML 1.0 (Fifth Edition), Appendix F "Autodetection of Character Encodings" (w3.org/TR/xml/#sec-guessing,
# checked 2026-11-30): the first four bytes tell UCS-4 / UTF-32 apart, with a byte-order mark (00 00 FE FF,
# FF FE 00 00) or without one ('<' as 00 00 00 3C, 3C 00 00 00). Expat reads UTF-8, UTF-16 (with or without a
# BOM, by the same appendix) and single-byte encodings, but not UTF-32 (measured with pyexpat 2026-11-30), so
# UTF-32 documents are decoded here and handed to the parser as text; the DTD refusal below works on parser
# events, whatever the encoding.
_UTF32 = ((b"\x00\x00\xfe\xff", "utf-32-be", 4), (b"\xff\xfe\x00\x00", "utf-32-le", 4),
          (b"\x00\x00\x00\x3c", "utf-32-be", 0), (b"\x3c\x00\x00\x00", "utf-32-le", 0))

_REFUSED = {"DTDForbidden": "a document type declaration (<!DOCTYPE ...>)",
            "EntitiesForbidden": "an entity declaration (<!ENTITY ...>)",
            "ExternalReferenceForbidden": "a reference to an external entity or DTD"}


def parse_xml(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> ET.Element:
    """Parse an XML file safely and return its root element.

    The file's size is checked first (os.stat; at most ``max_bytes`` bytes, default
    :data:`~inkground_lib.core.defaults.MAX_INK_FILE_BYTES` or the MiB in ``$INKGROUND_MAX_INK_FILE_MB``), then
    it is parsed by defusedxml with ``forbid_dtd``, ``forbid_entities`` and ``forbid_external``: any DOCTYPE,
    ENTITY declaration or external reference is refused, in every encoding the parser reads (UTF-8, UTF-16
    and, decoded here, UTF-32; with or without a byte-order mark). Every XML reader of
    :mod:`inkground_lib.formats` goes through here. A document nested deeper than MAX_XML_DEPTH levels is refused
    (:func:`check_depth`). Errors are FormatError naming the file and what was refused (or why it does not
    parse).
    """
    path = Path(path)
    check_file_size(path, max_bytes, MAX_INK_FILE_BYTES, MAX_INK_FILE_ENV, FormatError, "an XML ink file")
    try:
        import defusedxml
        import defusedxml.ElementTree as DET
    except ImportError:
        raise FormatError(f"{path}: not read: XML files are parsed only through defusedxml, which is not "
                          "installed (pip install -r requirements.txt)") from None
    try:
        data = path.read_bytes()
    except OSError as e:
        raise FormatError(f"{path}: cannot be read ({e.strerror or e})") from None
    source = data
    for mark, codec, skip in _UTF32:
        if data.startswith(mark):
            try:
                source = data[skip:].decode(codec)
            except UnicodeDecodeError as e:
                raise FormatError(f"{path}: not well-formed XML (not {codec.upper()} text: {e})") from None
            break
    try:
        root = DET.fromstring(source, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except defusedxml.DefusedXmlException as e:
        what = _REFUSED.get(type(e).__name__, type(e).__name__)
        raise FormatError(f"{path}: refused: the document holds {what}; DTDs, entities and external references "
                          f"are not accepted in ink files ({type(e).__name__})") from None
    except ET.ParseError as e:
        raise FormatError(f"{path}: not well-formed XML ({e})") from None
    check_depth(root, path)
    return root


def check_depth(root: ET.Element, path, limit: int = MAX_XML_DEPTH) -> None:
    """FormatError naming the file and the first element nested deeper than ``limit`` levels (the root is level
    1; :data:`~inkground_lib.core.defaults.MAX_XML_DEPTH`), found without recursion."""
    stack = [(root, 1)]
    while stack:
        el, d = stack.pop()
        if d > limit:
            raise FormatError(f"{path}: {describe_element(el)}: nested {d} levels deep; elements nested deeper than "
                              f"{limit} levels are refused (MAX_XML_DEPTH)")
        stack.extend((c, d + 1) for c in el)


def local_name(tag) -> str:
    """Tag name without namespace ('{ns}trace' -> 'trace'); comments / PIs give ''."""
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def xml_id(el: ET.Element) -> Optional[str]:
    return el.get(XML_ID) or el.get("id")


def describe_element(el: ET.Element, index: Optional[int] = None) -> str:
    name = local_name(el.tag)
    i = xml_id(el)
    s = f"<{name}"
    if i is not None:
        s += f' id="{i}"'
    s += ">"
    if index is not None:
        s += f" #{index}"
    return s
