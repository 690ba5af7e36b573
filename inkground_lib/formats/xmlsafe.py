"""Safe XML parsing shared by the XML readers, and the error every format reader raises."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

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


def parse_xml(path: Path) -> ET.Element:
    """Parse an XML file safely: DOCTYPE / ENTITY declarations are refused (or defusedxml is used)."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise FormatError(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        import defusedxml.ElementTree as DET  # type: ignore
    except ImportError:
        DET = None
    if DET is not None:
        try:
            return DET.fromstring(data, forbid_dtd=True)
        except ET.ParseError as e:
            raise FormatError(f"{path}: not well-formed XML ({e})") from None
        except Exception as e:  # defusedxml's DTDForbidden / EntitiesForbidden
            raise FormatError(f"{path}: refused: {type(e).__name__} ({e})") from None
    probe = data
    for bom, enc in ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
                     (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            probe = data.decode(enc, errors="replace").encode("utf-8")
            break
    m = re.search(rb"<!\s*(DOCTYPE|ENTITY)", probe, re.IGNORECASE)
    if m:
        raise FormatError(f"{path}: refused: the file declares <!{m.group(1).decode().upper()} ...> "
                          "(DTDs and entities are not accepted, to rule out entity expansion)")
    try:
        return ET.fromstring(data)
    except ET.ParseError as e:
        raise FormatError(f"{path}: not well-formed XML ({e})") from None


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
