"""Small real PDFs for tests, written by hand: one text line per page in a standard font (or no text at all, as a
scan's pages have), with a correct cross-reference table, so any PDF reader opens them."""

from __future__ import annotations


def pdf(pages: list[str | None], units: dict[str, str] | None = None) -> bytes:
    """A PDF of one page per item: its line of text, or None for a page without text. `units`: characters the
    font's ToUnicode map reads as other UTF-16 code units, in hex ({"H": "D83D"}), as a PDF's own font may say
    (the others as themselves)."""
    objects: list[bytes] = [b"", b""]  # 1: catalog, 2: page tree, filled in below
    kids = []
    font = len(objects) + 1
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for text in pages:
        line = "" if text is None else text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = (f"BT /F1 12 Tf 72 720 Td ({line}) Tj ET" if text is not None else "0 0 1 rg 72 72 200 200 re f")
        content = len(objects) + 1
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream".encode("latin-1"))
        kids.append(len(objects) + 1)
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R "
                       f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode())
    if units is not None:
        objects.append(_to_unicode(units))
        objects[font - 1] = objects[font - 1][:-2] + f"/ToUnicode {len(objects)} 0 R >>".encode()
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>".encode()
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _to_unicode(units: dict[str, str]) -> bytes:
    """A ToUnicode CMap for one-byte codes: those in `units` to the code units given, every other to itself."""
    chars = "".join(f"<{code:02X}> <{units.get(chr(code), f'{code:04X}')}>\n" for code in range(32, 127))
    cmap = ("/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Mapped def /CMapType 2 def\n"
            f"1 begincodespacerange <00> <FF> endcodespacerange\n95 beginbfchar\n{chars}endbfchar\n"
            "endcmap CMapName currentdict /CMap defineresource pop end end")
    return f"<< /Length {len(cmap)} >>\nstream\n{cmap}\nendstream".encode()
