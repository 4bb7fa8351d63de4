"""Wiki/markdown pages: heading forms, sections, CSV blocks, layout score, rows scored by the
field engine, and the composite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from extract_mlflow import evaluate
from extract_mlflow.config import LayoutProfile
from extract_mlflow.errors import ConfigError
from extract_mlflow.pages import check_layout, page_rows, parse_page, read_csv_block, title_key
from extract_mlflow.views.frames import report_frame
from extract_mlflow.views.markdown import report_markdown

PROSE = " ".join(f"word{i}" for i in range(25))  # 25 words: enough for min_words = 20
PROFILE = LayoutProfile(
    required=("Summary", "Catalyst", "Investigation"), min_words=20, table_section="Investigation"
)
CONFIG = {
    "layout": {
        "profiles": {
            "photocat": {
                "required": ["Summary", "Catalyst", "Investigation"],
                "min_words": 20,
                "table_section": "Investigation",
            }
        }
    },
    "fields": {
        "rows[].tof": {"type": "quantity", "rel_tol": 0.01},
        "rows[].conc": {"type": "quantity", "rel_tol": 0.01},
        "rows[].ratio": {"type": "ratio"},
        "rows[].note": {"ignore": True},
    },
}
# row 1 is the gold row written in other units and order: 0.05 mM == 50 µM, 4:1 == 1:4,
# 108 h⁻¹ == 1.8 min⁻¹; row 2: 0.1 mM == 100 µM, 30 h⁻¹ == 0.5 min⁻¹
TABLE = '```csv\nentry,conc,ratio,tof\n1,0.05 mM,4:1,108 h⁻¹\n2,"0.1 mM",2:1,30 h⁻¹\n```\n'


def page(*sections: tuple[str, str]) -> str:
    return "\n".join(f"== {title} ==\n{body}\n" for title, body in sections)


GOLD_ROWS = [
    {"entry": "1", "conc": "50 µM", "ratio": "1:4", "tof": "1.8 min⁻¹"},
    {"entry": "2", "conc": "100 µM", "ratio": "2:1", "tof": "0.5 min⁻¹"},
]


def gold_line(doc_id: str = "p1") -> dict[str, Any]:
    return {"id": doc_id, "topic": "photocat", "title": "A paper", "rows": GOLD_ROWS}


# -- parsing ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "== Catalyst ==",
        "=== Catalyst ===",
        "## Catalyst",
        "# Catalyst #",
        "Catalyst",
        "catalyst:",
        "**Catalyst**",
        "3. Catalyst",
        "  CATALYST  ",
    ],
)
def test_heading_forms(line: str) -> None:
    p = parse_page(f"{line}\n{PROSE}\n", titles=["Catalyst"])
    assert [title_key(s.title) for s in p.sections] == ["catalyst"]
    assert p.sections[0].words == 25


def test_a_title_alone_is_a_heading_only_when_it_is_a_known_title() -> None:
    p = parse_page("Catalyst\ntext\nUnrelated line\nmore\n", titles=["Catalyst"])
    assert [s.title for s in p.sections] == ["Catalyst"]
    assert "Unrelated line" in p.sections[0].text


def test_headings_inside_code_fences_are_not_headings() -> None:
    p = parse_page("## A\n```\n## not a heading\n```\ntext\n")
    assert [s.title for s in p.sections] == ["A"]


def test_csv_block_with_quoted_commas_and_ragged_rows() -> None:
    block = read_csv_block('name,conc\n"Co(II), bipyridine",50 µM\nshort\nx,1,extra\n')
    assert block.header == ["name", "conc"]
    assert block.rows[0] == {"name": "Co(II), bipyridine", "conc": "50 µM"}
    assert block.rows[1] == {"name": "short", "conc": None}
    assert block.rows[2] == {"name": "x", "conc": "1"}
    assert block.problems == [
        "csv row 3 has 1 cells, the header has 2",
        "csv row 4 has 3 cells, the header has 2",
    ]


def test_csv_block_with_only_a_header_is_not_usable() -> None:
    block = read_csv_block("a,b\n")
    assert block.header == ["a", "b"] and block.rows == [] and not block.usable
    assert block.problems == ["csv block has a header but no data row"]


# -- layout ----------------------------------------------------------------------------------
def test_complete_page_scores_one() -> None:
    text = page(("Summary", PROSE), ("Catalyst", PROSE), ("Investigation", TABLE))
    result = check_layout(parse_page(text, PROFILE.required), "photocat", PROFILE)
    assert result.score == 1.0 and result.missing == {}


def test_section_with_too_few_words_is_missing() -> None:
    text = page(("Summary", "too short"), ("Catalyst", PROSE), ("Investigation", TABLE))
    result = check_layout(parse_page(text, PROFILE.required), "photocat", PROFILE)
    assert result.missing == {"Summary": "too short: 2 < 20 words"}
    assert result.score == pytest.approx(2 / 3)


def test_table_section_without_csv_block_is_missing() -> None:
    text = page(("Summary", PROSE), ("Catalyst", PROSE), ("Investigation", PROSE))
    result = check_layout(parse_page(text, PROFILE.required), "photocat", PROFILE)
    assert result.missing == {"Investigation": "no csv block"}


def test_table_section_with_header_only_csv_is_missing() -> None:
    text = page(("Summary", PROSE), ("Catalyst", PROSE), ("Investigation", "```csv\na,b\n```"))
    result = check_layout(parse_page(text, PROFILE.required), "photocat", PROFILE)
    assert result.missing == {"Investigation": "csv block has no data row"}


def test_page_with_no_sections_scores_zero() -> None:
    result = check_layout(parse_page("just some text\n", PROFILE.required), "photocat", PROFILE)
    assert result.score == 0.0
    assert set(result.missing.values()) == {"absent"}


def test_rows_come_from_the_table_section_else_the_first_csv_block() -> None:
    other = "```csv\nentry\n9\n```\n"
    text = page(("Summary", PROSE + "\n" + other), ("Investigation", TABLE))
    rows, source, _ = page_rows(parse_page(text, PROFILE.required), PROFILE)
    assert source == "table_section" and [r["entry"] for r in rows] == ["1", "2"]
    rows, source, _ = page_rows(parse_page(TABLE, PROFILE.required), PROFILE)
    assert source == "first_csv_block" and len(rows) == 2


# -- scoring pages ----------------------------------------------------------------------------
def test_units_and_ratios_inside_cells_and_composite() -> None:
    text = page(("Summary", PROSE), ("Catalyst", PROSE), ("Investigation", TABLE))
    r = evaluate([gold_line()], [{"id": "p1", "output": text}], CONFIG)
    assert r.micro.f1 == 1.0
    assert set(r.fields) == {"rows[].entry", "rows[].conc", "rows[].ratio", "rows[].tof"}
    (doc,) = r.documents
    assert doc.layout is not None and doc.layout.score == 1.0
    assert doc.rows_gold == 2 and doc.rows_pred == 2
    assert r.layout_score == 1.0 and r.composite == 1.0
    m = r.metrics()
    assert m["layout_score"] == 1.0 and m["composite"] == 1.0


def test_wrong_unit_is_a_wrong_value_with_units_in_the_example() -> None:
    bad = TABLE.replace("0.05 mM", "50 mM")
    text = page(("Summary", PROSE), ("Catalyst", PROSE), ("Investigation", bad))
    r = evaluate([gold_line()], [{"id": "p1", "output": text}], CONFIG)
    conc = r.fields["rows[].conc"]
    assert (conc.counts.tp, conc.counts.fp, conc.counts.fn) == (1, 1, 1)
    assert conc.examples[0]["expected"] == "50 µM" and conc.examples[0]["got"] == "50 mM"


def test_csv_only_page_keeps_its_data_score_and_loses_its_layout() -> None:
    r = evaluate([gold_line()], [{"id": "p1", "output": "Some title\n" + TABLE}], CONFIG)
    assert r.micro.f1 == 1.0
    assert r.layout_score == 0.0 and r.composite == 0.0
    (doc,) = r.documents
    assert doc.layout is not None and doc.layout.rows_source == "first_csv_block"


def test_page_with_no_sections_and_no_table_scores_zero() -> None:
    r = evaluate([gold_line()], [{"id": "p1", "output": "nothing useful here"}], CONFIG)
    assert r.micro.f1 == 0.0 and r.layout_score == 0.0 and r.composite == 0.0
    assert r.documents[0].counts.fn == 8


def test_missing_page_has_layout_zero_and_only_rows_are_scored() -> None:
    r = evaluate([gold_line("p1"), gold_line("p2")], [{"id": "p1", "output": TABLE}], CONFIG)
    docs = {d.id: d for d in r.documents}
    assert docs["p2"].status == "missing" and docs["p2"].layout is not None
    assert docs["p2"].layout.score == 0.0 and docs["p2"].layout.missing["Summary"] == "no page"
    assert "topic" not in r.fields and "title" not in r.fields  # attributes, not fields


def test_profile_override_and_unknown_profile() -> None:
    text = page(("Summary", PROSE), ("Catalyst", PROSE), ("Investigation", TABLE))
    gold = [{"id": "p1", "rows": GOLD_ROWS}]  # no topic: the only profile applies
    assert evaluate(gold, [{"id": "p1", "output": text}], CONFIG).layout_score == 1.0
    r = evaluate(gold, [{"id": "p1", "output": text}], CONFIG, profile="photocat")
    assert r.layout_score == 1.0
    with pytest.raises(ConfigError, match="unknown layout profile 'nope'"):
        evaluate(gold, [{"id": "p1", "output": text}], CONFIG, profile="nope")


def test_progress_line_and_tokens() -> None:
    text = page(("Summary", PROSE), ("Catalyst", "short"), ("Investigation", TABLE))
    pred = [{"id": "p1", "output": text, "usage": {"input_tokens": 24000, "output_tokens": 92}}]
    r = evaluate([gold_line()], pred, CONFIG)
    line = r.documents[0].progress_line()
    assert line == "p1: matched 8/8 gold cells, rows 2/2, 24092 tokens, layout 2/3"
    assert r.tokens_per_doc == 24092
    md = report_markdown(r)
    assert "## Pages" in md and "Catalyst (too short: 1 < 20 words)" in md
    assert r.to_dict()["layout"]["documents"]["p1"]["missing"] == {
        "Catalyst": "too short: 1 < 20 words"
    }


def test_latency_quantiles() -> None:
    gold = [{"id": str(i), "x": 1} for i in range(5)]
    pred = [{"id": str(i), "x": 1, "latency_ms": 100 * (i + 1)} for i in range(5)]
    r = evaluate(gold, pred)
    assert r.latency_ms(0.5) == 300.0 and r.latency_ms(0.95) == pytest.approx(480.0)
    assert r.metrics()["latency_p95_ms"] == pytest.approx(480.0)
    assert "layout_score" not in r.metrics() and "composite" not in r.metrics()


def test_counts_frame_carries_layout_for_compare() -> None:
    text = page(("Summary", PROSE), ("Catalyst", PROSE), ("Investigation", TABLE))
    r = evaluate([gold_line()], [{"id": "p1", "output": text}], CONFIG)
    frame = report_frame(r, "counts")
    assert list(frame["layout_score"]) == [1.0]


# -- the bundled example ----------------------------------------------------------------------
PAPERS = Path(__file__).resolve().parents[2] / "examples" / "papers"


def test_papers_example_reproduces_the_gate_purpose() -> None:
    config = PAPERS / "config.toml"
    complete = evaluate(PAPERS / "gold.jsonl", PAPERS / "pred_complete.jsonl", config)
    csv_only = evaluate(PAPERS / "gold.jsonl", PAPERS / "pred_csv_only.jsonl", config)
    assert csv_only.micro.f1 is not None and complete.micro.f1 is not None
    assert csv_only.micro.f1 > complete.micro.f1
    assert csv_only.composite == 0.0
    assert complete.layout_score == 1.0
    assert complete.composite is not None and complete.composite > csv_only.composite
    # the planted unit variants count as correct: 108 h⁻¹ == 1.8 min⁻¹, 298.15 K == 25 °C, ...
    assert complete.micro.fp == 10 and complete.micro.fn == 11
