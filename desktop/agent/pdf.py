"""The text of an attached PDF, for models that read text: a PDF's bytes are compressed drawing instructions,
which no model reads, and the file tools would only show them as binary.

pypdf (pure Python, well kept; its own caps stop decompression bombs) reads the pages in the thread that prepares
the message. A PDF may come from the workspace, which sandboxed commands write, so it is read as data only: text
extraction decodes no images (no external decoder runs) and stops at PAGE_LIMIT pages or TEXT_LIMIT characters,
saying so."""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass

from desktop.kernel.wellformed import well_formed

log = logging.getLogger(__name__)

PAGE_LIMIT = 500
TEXT_LIMIT = 2_000_000  # characters: a book; the model reads a long text from its file, in parts


class NotReadable(Exception):
    """The PDF's text cannot be had (damaged, encrypted); the message says why, for people."""


@dataclass(frozen=True)
class PdfText:
    pages: int  # in the document
    text: str  # page by page, each after a "[Page N]" line; "" when no page has a text layer (a scan)
    cut: bool = False  # stopped at PAGE_LIMIT pages or TEXT_LIMIT characters


def is_pdf(data: bytes) -> bool:
    return data[:1024].lstrip().startswith(b"%PDF-")


def pdf_text(data: bytes) -> PdfText:
    """The document's page count and text. Raises NotReadable."""
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            reader.decrypt("")  # most "protected" PDFs only restrict printing: an empty password opens them
        pages = len(reader.pages)
        parts: list[str] = []
        size, cut = 0, pages > PAGE_LIMIT
        for number, page in enumerate(reader.pages[:PAGE_LIMIT], start=1):
            text = well_formed(page.extract_text()).strip()  # a font's map may name lone surrogates
            if text:
                parts.append(f"[Page {number}]\n{text}")
                size += len(text)
            if size > TEXT_LIMIT:
                cut = True
                break
    except FileNotDecryptedError:
        raise NotReadable("it is locked with a password") from None
    except (PdfReadError, ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
        log.info("reading a PDF failed: %s", exc)
        raise NotReadable("it is damaged or not a PDF pypdf can read") from None
    return PdfText(pages, "\n\n".join(parts)[:TEXT_LIMIT], cut)


def page_count(data: bytes) -> int:
    """How many pages the PDF has (its chip says so before it is sent). Raises NotReadable."""
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            reader.decrypt("")
        return len(reader.pages)
    except FileNotDecryptedError:
        raise NotReadable("locked with a password") from None
    except (PdfReadError, ValueError, KeyError, TypeError, IndexError, RecursionError):
        raise NotReadable("damaged") from None
