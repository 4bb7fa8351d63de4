"""Loading source documents: folders of .txt/.md/.pdf, JSONL, a field of the gold line; every
unreadable source is one InputError naming the file (and line)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from extract_mlflow.errors import InputError
from extract_mlflow.io.sources import load_sources, read_pdf, sources_from_gold


def make_pdf(lines: list[str]) -> bytes:
    """A minimal valid one-page PDF (PDF 1.4) showing `lines` in Helvetica, written by hand:
    catalog, page tree, page, content stream, font, and a cross-reference table with the
    objects' byte offsets."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    ops = ["BT", "/F1 11 Tf", "14 TL", "72 770 Td"]
    ops += [f"({escape(line)}) Tj T*" for line in lines]
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


PDF_LINES = ["Invoice NH-2026-0412", "Annual maintenance, gas boiler 340.00", "Total (EUR) 597.38"]


def test_the_hand_written_pdf_is_valid_for_pypdf_in_strict_mode() -> None:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(make_pdf(PDF_LINES)), strict=True)
    assert len(reader.pages) == 1


def test_folder_of_txt_md_and_pdf(tmp_path: Path) -> None:
    (tmp_path / "inv-001.txt").write_text("Total 597.38\n", encoding="utf-8")
    (tmp_path / "inv-002.md").write_text("# Invoice\nTotal 1,559.23", encoding="utf-8")
    (tmp_path / "inv-003.pdf").write_bytes(make_pdf(PDF_LINES))
    (tmp_path / "inv-004.TXT").write_bytes("\ufeffBOM and µM".encode())  # UTF-8 BOM dropped
    (tmp_path / "inv-005.txt").write_bytes("UTF-16 text".encode("utf-16"))
    (tmp_path / "notes.csv").write_text("not a source")
    (tmp_path / ".hidden.txt").write_text("ignored")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inv-009.txt").write_text("nested folders are not read")
    sources = load_sources(tmp_path)
    assert sorted(sources) == ["inv-001", "inv-002", "inv-003", "inv-004", "inv-005"]
    assert sources["inv-002"] == "# Invoice\nTotal 1,559.23"
    for line in PDF_LINES:
        assert line in sources["inv-003"]
    assert sources["inv-004"] == "BOM and µM"
    assert sources["inv-005"] == "UTF-16 text"


def test_two_files_for_one_id(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one")
    (tmp_path / "a.md").write_text("two")
    with pytest.raises(InputError, match="a second source for id 'a'"):
        load_sources(tmp_path)


def test_text_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "inv-001.txt"
    bad.write_bytes(b"Caf\xe9 au lait")
    with pytest.raises(InputError, match="not valid UTF-8") as err:
        load_sources(tmp_path)
    assert str(bad) in str(err.value)


@pytest.mark.parametrize(
    "data",
    [
        b"%PDF-1.4\ngarbage",
        b"not a pdf at all",
        b"",
        make_pdf(PDF_LINES)[:200],
    ],
    ids=["garbage", "not-pdf", "empty", "truncated"],
)
def test_a_corrupt_pdf_is_one_clear_error_naming_the_file(tmp_path: Path, data: bytes) -> None:
    bad = tmp_path / "inv-007.pdf"
    bad.write_bytes(data)
    with pytest.raises(InputError, match="cannot read the PDF") as err:
        load_sources(tmp_path)
    assert str(err.value).startswith(str(bad))


def test_an_encrypted_pdf(tmp_path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(make_pdf(PDF_LINES))))
    writer.encrypt("secret", algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    f = tmp_path / "x.pdf"
    f.write_bytes(buf.getvalue())
    with pytest.raises(InputError, match="encrypted") as err:
        read_pdf(f)
    assert str(f) in str(err.value)


def test_a_pdf_without_text(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    f = tmp_path / "scan.pdf"
    f.write_bytes(make_pdf([]))
    assert read_pdf(f).strip() == ""
    assert "no text layer" in caplog.text


def test_jsonl(tmp_path: Path) -> None:
    f = tmp_path / "sources.jsonl"
    rows = [{"id": "inv-001", "text": "Total 597.38"}, {"id": 2, "text": "µM"}]
    f.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n\n")
    assert load_sources(f) == {"inv-001": "Total 597.38", "2": "µM"}
    g = tmp_path / "other.jsonl"
    g.write_text('{"doc": "a", "body": "x"}\n')
    assert load_sources(g, id_key="doc", text_key="body") == {"a": "x"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "a", "text": "x"}\n{"id": "b", "text": \n', "line 2: invalid JSON"),
        ('["a", "x"]\n', r'line 1: not a JSON object \(got array\); expected \{"id": \.\.\.'),
        ('{"id": "a"}\n', "line 1: 'text' must be a string"),
        ('{"id": true, "text": "x"}\n', "line 1: 'id' must be a string or an integer"),
        ('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', "line 2: a second source"),
    ],
)
def test_bad_jsonl_lines_name_the_line(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "sources.jsonl"
    f.write_text(content)
    with pytest.raises(InputError, match=message) as err:
        load_sources(f)
    assert str(f) in str(err.value)


def test_jsonl_not_utf8(tmp_path: Path) -> None:
    f = tmp_path / "sources.jsonl"
    f.write_bytes(b'{"id": "a", "text": "caf\xe9"}\n')
    with pytest.raises(InputError, match="line 1: not valid UTF-8"):
        load_sources(f)


def test_missing_path_and_wrong_kind(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="sources not found"):
        load_sources(tmp_path / "nope")
    one = tmp_path / "inv-001.txt"
    one.write_text("x")
    with pytest.raises(InputError, match="must be a folder"):
        load_sources(one)


def test_sources_from_gold() -> None:
    gold: dict[str, dict[str, Any]] = {
        "a": {"id": "a", "source": "Total 5"},
        "b": {"id": "b"},
        "c": {"id": "c", "source": None},
    }
    assert sources_from_gold(gold, "source") == {"a": "Total 5"}  # b and c: unchecked
    with pytest.raises(InputError, match="gold document 'd': source field 'source'"):
        sources_from_gold({"d": {"id": "d", "source": 5}}, "source")
