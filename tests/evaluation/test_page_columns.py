"""Pages kept as columns: every page's layout score, sections and rows stay in columns while
only the first pages (and those with the most errors) keep their full layout result. The
layout score, composite, missing sections and the counts frame equal a plain computation over
every page's own layout result; a bounded listing changes nothing but the listing, and says
how many pages it leaves out (JSON, summary.md, the notes, the progress lines of `score`);
parts merged in any order equal one pass."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import synth

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.evaluation import pages as pages_module
from extract_mlflow.evaluation.pages import PageRecords
from extract_mlflow.report import Report
from extract_mlflow.views.frames import report_frame
from extract_mlflow.views.markdown import report_markdown
from extract_mlflow.views.table import report_table

N = 240


def page_set(n: int, seed: int = 0) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`n` invoices as pages (synth.py's), made to vary: sections dropped, a ragged CSV row
    (a CSV problem), a page without its table section, a JSON prediction (no page text) and
    documents without a prediction."""
    rng = random.Random(seed)
    gold, pred, _ = synth.make_dataset(n, seed)
    out_gold, out_pred = [], []
    for k, (g, p) in enumerate(zip(gold, pred, strict=True)):
        gp, pp = synth.page_documents(g, p, rng, drop_section=0.4)
        if k % 7 == 3:  # a row with a cell too many
            pp["output"] = (
                pp["output"]
                .replace("```csv\n", "```csv\nx,y\n", 1)
                .replace("\n```", "\n1,2,3,4,5,6\n```", 1)
            )
        elif k % 11 == 5:  # the CSV block outside its section
            pp["output"] = pp["output"].replace("== Line items ==", "Some items:")
        elif k % 13 == 6:
            pp = {"id": pp["id"], "rows": gp["rows"][:1]}
        out_gold.append(gp)
        if k % 17 != 8:
            out_pred.append(pp)
    return out_gold, out_pred


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("pages")
    gold, pred = page_set(N)
    config = folder / "pages.toml"
    config.write_text(synth.PAGE_CONFIG, encoding="utf-8")
    return (
        synth.write_jsonl(gold, folder / "gold.jsonl"),
        synth.write_jsonl(pred, folder / "pred.jsonl"),
        config,
    )


@pytest.fixture(scope="module")
def full(files: tuple[Path, Path, Path]) -> Report:
    """The loaded (retaining) evaluation: every document keeps its own layout result."""
    return evaluate(*files, stream=False)


def test_the_generated_set_has_what_the_summaries_count(full: Report) -> None:
    docs = [d for d in full.documents if d.layout is not None]
    assert len(docs) == N and full.pages is not None and full.pages.count == N
    assert len({d.layout.score for d in docs if d.layout}) > 2
    assert sum(bool(d.layout.problems) for d in docs if d.layout) > 10
    assert {d.layout.rows_source for d in docs if d.layout} >= {"table_section", None}
    assert any(d.status == "missing" for d in docs)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("listed", [3, None])
def test_summaries_from_columns_equal_those_of_the_full_results(
    full: Report,
    files: tuple[Path, Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    stream: bool,
    listed: int | None,
) -> None:
    """Layout score, composite, missing sections, the counts frame's layout scores and the
    per-document rows, written plainly from every document's own layout result, equal those
    the columns give (streamed or loaded, every page listed or three)."""
    if listed is not None:
        monkeypatch.setattr(pages_module, "PAGES_LISTED", listed)
    report = evaluate(*files, stream=stream)
    docs = [d for d in full.documents if d.layout is not None]
    scores = [d.layout.score for d in docs if d.layout]
    assert report.layout_score == sum(scores) / len(scores)
    assert report.composite == (full.micro.f1 or 0.0) * (sum(scores) / len(scores))
    missing = Counter(t for d in docs if d.layout for t in d.layout.missing)
    assert report.missing_sections == dict(sorted(missing.items(), key=lambda kv: (-kv[1], kv[0])))
    assert list(report.missing_sections.values()) == sorted(missing.values(), reverse=True)
    pages = report.pages
    assert pages is not None
    assert pages.with_missing == sum(bool(d.layout.missing) for d in docs if d.layout)
    assert pages.problem_count == sum(len(d.layout.problems) for d in docs if d.layout)
    plain = [d.layout.score if d.layout else np.nan for d in full.documents]
    frame = report_frame(report, "counts")
    np.testing.assert_array_equal(frame["layout_score"].to_numpy(), np.array(plain))
    rows = [(d.id, d.rows_gold, d.rows_pred) for d in full.documents]
    assert [(d.id, d.rows_gold, d.rows_pred) for d in report.documents] == rows
    assert report.metrics() == full.metrics()


def _without_listing(data: dict[str, Any]) -> dict[str, Any]:
    layout = {
        k: v for k, v in data["layout"].items() if k not in ("documents", "documents_not_listed")
    }
    return {**data, "layout": layout}


@pytest.mark.parametrize("stream", [False, True])
def test_a_bounded_listing_changes_nothing_but_the_listing(
    full: Report, files: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    monkeypatch.setattr(pages_module, "PAGES_LISTED", 7)
    bounded = evaluate(*files, stream=stream)
    a, b = full.to_dict(), bounded.to_dict()
    assert _without_listing(b) == _without_listing(a)  # the worst documents keep their layout
    assert list(b["layout"]["documents"].items()) == list(a["layout"]["documents"].items())[:7]
    assert b["layout"]["documents_not_listed"] == N - 7
    assert "documents_not_listed" not in a["layout"]
    assert [d.id for d in bounded.layouts] == [d.id for d in full.layouts[:7]]
    worst = bounded.worst_documents()  # beyond the listed pages, with their layout
    assert max(d.position for d in worst) >= 7 and all(d.layout is not None for d in worst)
    assert bounded.pages is not None
    assert 7 < len(bounded.pages.layouts) <= 7 + pages_module.WORST_KEPT < N


def test_the_views_and_the_cli_say_how_many_pages_are_not_listed(
    full: Report, files: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages_module, "PAGES_LISTED", 7)
    bounded = evaluate(*files)
    md = report_markdown(bounded)
    table = md.split("## Pages", 1)[1].split("\n\n")[1].splitlines()
    assert len(table) == 2 + 7  # head, rule and the listed pages
    assert f"… {N - 7} more not shown" in md
    pages = bounded.pages
    assert pages is not None and full.pages is not None
    notes = [line for line in report_table(bounded).splitlines() if "` layout " in line]
    shown = sum(bool(d.layout and d.layout.missing) for d in full.layouts[:7])
    assert len(notes) == shown
    assert f"… {pages.with_missing - shown} more not shown" in report_table(bounded)
    problems = [(d.id, p) for d in full.layouts[:7] if d.layout for p in d.layout.problems]
    assert f"… {pages.problem_count - len(problems)} more not shown" in md
    args = [str(f) for f in files]
    result = CliRunner().invoke(main, ["score", args[0], args[1], "--config", args[2], "--no-log"])
    assert result.exit_code == 0, result.stderr
    progress = [line for line in result.stderr.splitlines() if "gold cells" in line]
    assert len(progress) == 7
    assert f"… {N - 7} more not shown" in result.stderr.splitlines()


@pytest.fixture(scope="module")
def records(full: Report) -> list[Any]:
    return [d for d in full.documents if d.layout is not None or d.rows_pred is not None]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), cuts=st.integers(1, 4), listed=st.integers(1, 30))
def test_parts_merged_in_any_order_equal_one_pass(
    records: list[Any], seed: int, cuts: int, listed: int
) -> None:
    rng = random.Random(seed)
    shuffled = records[:]
    rng.shuffle(shuffled)
    bounds = sorted(rng.sample(range(1, len(records)), cuts))
    parts = [shuffled[a:b] for a, b in zip([0, *bounds], [*bounds, len(records)], strict=True)]
    one = PageRecords(listed)
    for d in records:
        one.add(d)
    merged = []
    for part in parts:
        r = PageRecords(listed)
        for d in part:
            r.add(d)
        merged.append(r)
    first = merged[0]
    for other in merged[1:]:
        first.merge(other)
    got, want = first.summary(), one.summary()
    assert got == want
    assert got.listed == [d.position for d in records if d.layout is not None][:listed]
    assert json.dumps(got.missing_sections) == json.dumps(want.missing_sections)
