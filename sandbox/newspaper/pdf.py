"""Small real PDF documents for the sandbox, and the ``{document{mimeType, size, data}}`` shape carrying them.

The generator writes a one-page PDF 1.4 file (Helvetica text lines, exact cross-reference table) so clients
that save or inspect the documents handle genuine PDF bytes.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

PDF_MIME_TYPES = ("application/pdf", "PDF")


def _pdf_text(line: str) -> str:
    """A PDF literal string body: Latin-1 only, with the delimiters escaped."""
    safe = line.encode("latin-1", errors="replace").decode("latin-1")
    return safe.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def render_pdf(lines: Sequence[str]) -> bytes:
    """One A4 page showing ``lines`` top-down; a complete, parseable PDF file.

    Args:
        lines: The text lines, the first one printed larger as a title.

    Returns:
        The PDF bytes.
    """
    operations = ["BT", "/F1 14 Tf", "50 790 Td", "16 TL"]
    for index, line in enumerate(lines):
        if index == 1:
            operations.append("/F1 10 Tf")
        operations.append(f"({_pdf_text(line)}) Tj T*")
    operations.append("ET")
    stream = "\n".join(operations).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 %d\n" % (len(objects) + 1)
    out += b"0000000000 65535 f \n"
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref_at)
    return bytes(out)


def document_body(content: bytes, mime_type: str = "application/pdf") -> dict[str, Any]:
    """The spec's document shape: base64 ``data`` and ``size`` as the decoded byte length."""
    return {
        "document": {
            "mimeType": mime_type,
            "size": len(content),
            "data": base64.b64encode(content).decode("ascii"),
        }
    }
