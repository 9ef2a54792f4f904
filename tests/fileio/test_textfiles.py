"""Decoding a file whose encoding is not announced: one encoding for the whole file, or line by line when it
mixes UTF-8 and Windows-1252; control characters found in one pass."""

from __future__ import annotations

import codecs

import pandas as pd
import pytest

from fileio.textfiles import control_characters, decode_text, has_control_characters, visible_controls


def test_a_pure_file_is_decoded_in_its_one_encoding() -> None:
    assert decode_text("Zürich\n".encode()).text == "Zürich\n"
    cp1252 = decode_text("Zürich\nGenève\n".encode("cp1252"))
    assert (cp1252.text, cp1252.encoding, cp1252.bad_lines) == ("Zürich\nGenève\n", "cp1252", {})
    bom = decode_text(codecs.BOM_UTF8 + "Zürich\n".encode())
    assert (bom.text, bom.encoding) == ("Zürich\n", "utf-8-sig")
    assert decode_text("Zürich\n".encode("utf-16")).text == "Zürich\n"


def test_mostly_utf8_reports_the_other_lines_and_keeps_the_line_structure() -> None:
    data = "a;ü\r\n".encode() + "b;ü\r\n".encode("cp1252") + "c;é\rd;ö\n".encode()
    decoded = decode_text(data)
    assert decoded.encoding == "utf-8"
    assert decoded.bad_lines == {
        2: "not valid UTF-8 at byte 3 of line 2 (0xFC); the file mixes encodings (most of it is UTF-8)"
    }
    assert decoded.text.splitlines() == ["a;ü", "b;\ufffd", "c;é", "d;ö"]


def test_mostly_windows_1252_reports_the_utf8_lines() -> None:
    data = "a;ü\n".encode("cp1252") + "b;ü\n".encode() + "c;é\n".encode("cp1252")
    decoded = decode_text(data)
    assert decoded.encoding == "cp1252"
    assert decoded.bad_lines == {
        2: "line 2 is UTF-8 ('ü') in a file that is otherwise Windows-1252; the file mixes encodings"
    }
    assert decoded.text.splitlines()[0] == "a;ü"


def test_a_byte_windows_1252_does_not_define_is_a_bad_line_of_a_windows_1252_file() -> None:
    data = "a;ü\n".encode("cp1252") + b"b;\x81\n" + "c;é\n".encode("cp1252") + "d;ü\n".encode()
    assert decode_text(data).bad_lines == {
        2: "not valid Windows-1252 at byte 3 of line 2 (0x81)",
        4: "line 4 is UTF-8 ('ü') in a file that is otherwise Windows-1252; the file mixes encodings",
    }


def test_a_given_utf8_encoding_reports_bad_lines_and_any_other_must_fit() -> None:
    data = "a;ü\n".encode("cp1252") + "b;ü\n".encode("cp1252")
    assert list(decode_text(data, "utf-8").bad_lines) == [1, 2]
    assert decode_text(data, "latin-1").text == "a;ü\nb;ü\n"
    with pytest.raises(UnicodeDecodeError):
        decode_text(b"\x81", "cp1252")


def test_control_characters_are_found_in_one_pass_and_shown_per_value() -> None:
    clean = b"a;b\tc\r\n"
    assert not has_control_characters(clean, decode_text(clean))
    dirty = b"a;b\x00c\n"
    assert has_control_characters(dirty, decode_text(dirty))
    utf16 = "a;b\x1bc\n".encode("utf-16")  # NUL bytes galore, but no NUL character
    assert has_control_characters(utf16, decode_text(utf16))
    assert not has_control_characters("a\n".encode("utf-16"), decode_text("a\n".encode("utf-16")))
    values = pd.Series(["ok", "x\x00y", None, "tab\there", "del\x7f", 5], dtype=object)
    assert control_characters(values).to_dict() == {1: "U+0000 (NUL)", 4: "U+007F (DEL)"}
    assert visible_controls(pd.Series(["x\x00y\x1b"])).tolist() == ["x\\x00y\\x1b"]


def test_windows_1252_that_happens_to_decode_as_utf8_is_not_taken_for_utf8() -> None:
    """ "ß" and a no-break space are the UTF-8 bytes of U+07E0: no address holds that, so the line stays."""
    data = "Müller;Hauptstraße\xa012\n".encode("cp1252") + "Bühler;Weg\n".encode("cp1252")
    lone = "Meier;Hauptstraße\xa012\n".encode("cp1252")
    decoded = decode_text(data + lone)
    assert decoded.encoding == "cp1252" and decoded.bad_lines == {}
    assert decoded.text.splitlines()[2] == "Meier;Hauptstraße\xa012"
