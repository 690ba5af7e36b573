"""Safe XML parsing shared by the XML readers, and the error every format reader raises."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

XML_ID = "{http://www.w3.org/XML/1998/namespace}id"


class FormatError(ValueError):
    """A file that cannot be read in the format it claims; the message names file and element / field."""


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
