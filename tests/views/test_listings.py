"""Every listing for people is bounded (#28 item 3): the terminal table, summary.md, the diff
and its comparison page show the first entries and say how many more there are, while every
count stays whole (the real CLI on inputs made to overflow each listing)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from extract_mlflow.cli import main
from extract_mlflow.core.text import FIELDS_LISTED, LISTED
from extract_mlflow.io.loading import KEPT_LINES
from extract_mlflow.views.page import PAGE_FLIPS, SIDE_BY_SIDE

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synth import make_dataset, write_jsonl


def cli(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def more(n: int) -> str:
    return f"… {n} more not shown"


GARBAGE = KEPT_LINES + 500


@pytest.fixture(scope="module")
def garbage(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """10 documents predicted well, then more garbage lines than are kept."""
    folder = tmp_path_factory.mktemp("garbage")
    gold = write_jsonl([{"id": f"d{i}", "x": i} for i in range(10)], folder / "gold.jsonl")
    pred = folder / "pred.jsonl"
    lines = [json.dumps({"id": f"d{i}", "x": i}) for i in range(10)]
    lines += [f"garbage {n} {{" for n in range(GARBAGE)]
    pred.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return gold, pred


@pytest.mark.parametrize("fmt", ["table", "md"])
def test_garbage_lines_are_counted_and_a_few_listed(garbage: tuple[Path, Path], fmt: str) -> None:
    code, out, err = cli("score", *garbage, "--no-log", "--format", fmt)
    assert code == 0, err
    listed = [line for line in out.splitlines() if "without a usable id" in line]
    assert len(listed) == LISTED
    assert listed[0].endswith("line 11: invalid JSON: Expecting value at character 1")
    assert more(GARBAGE - LISTED) in out
    assert str(GARBAGE) in out  # the parse failures counted in full
    assert len(out) < 20_000


def test_json_keeps_some_garbage_lines_and_counts_all(garbage: tuple[Path, Path]) -> None:
    code, out, err = cli("score", *garbage, "--no-log", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert len(data["unattributed_lines"]) == KEPT_LINES
    assert data["unattributed_lines"][-1].startswith(f"line {10 + KEPT_LINES}:")
    assert data["unattributed_lines_not_listed"] == GARBAGE - KEPT_LINES
    # every line counts: 10 documents and GARBAGE lines that cannot be their predictions
    assert data["parse_failure_rate"] == pytest.approx(GARBAGE / (10 + GARBAGE))


def test_a_complete_list_says_nothing_more(tmp_path: Path) -> None:
    gold = write_jsonl([{"id": "a", "x": 1}], tmp_path / "gold.jsonl")
    pred = tmp_path / "pred.jsonl"
    pred.write_text('{"id": "a", "x": 1}\nbroken\n', encoding="utf-8")
    code, out, err = cli("score", gold, pred, "--no-log", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert len(data["unattributed_lines"]) == 1 and "unattributed_lines_not_listed" not in data
    code, out, _ = cli("score", gold, pred, "--no-log")
    assert "more not shown" not in out


def test_fields_beyond_the_cap_are_counted(tmp_path: Path) -> None:
    extra = FIELDS_LISTED + 40  # hallucinated keys, each its own field (F1 0: listed first)
    gold = write_jsonl([{"id": "a", "x": 1}], tmp_path / "gold.jsonl")
    pred = write_jsonl([{"id": "a", "x": 1, **{f"k{n}": n for n in range(extra)}}], tmp_path / "p")
    for fmt in ("table", "md"):
        code, out, err = cli("score", gold, pred, "--no-log", "--format", fmt)
        assert code == 0, err
        shown = set(re.findall(r"^\|? ?`?(k\d+)`? ", out, flags=re.MULTILINE))
        assert len(shown) == FIELDS_LISTED  # in the field table, and its examples
        assert more(extra + 1 - FIELDS_LISTED) in out  # x, the one right field, is not shown


FLIPPED = PAGE_FLIPS + 60


@pytest.fixture(scope="module")
def flipped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A gold set, itself as A (every document fully correct) and noisy predictions as B
    (most documents no longer fully correct: they flip)."""
    folder = tmp_path_factory.mktemp("flips")
    gold, pred, _ = make_dataset(FLIPPED + 200, 5, change=0.3)
    gold_path = write_jsonl(gold, folder / "gold.jsonl")
    return gold_path, gold_path, write_jsonl(pred, folder / "pred_b.jsonl")


def _broke(flipped: tuple[Path, Path, Path]) -> int:
    code, out, err = cli("diff", *flipped, "--format", "json", "--resamples", "10")
    assert code == 0, err
    n = sum(1 for f in json.loads(out)["flips"] if f["direction"] == "broke")
    assert n > PAGE_FLIPS, "too few flips to fill the page's listing"
    return n


@pytest.mark.slow
def test_the_comparison_page_is_bounded(flipped: tuple[Path, Path, Path]) -> None:
    broke = _broke(flipped)
    code, page, err = cli("diff", *flipped, "--format", "html", "--resamples", "10")
    assert code == 0, err
    assert f"fully correct → not ({broke})" in page
    assert len(re.findall(r"<li><code><a href=\"#doc-", page)) == SIDE_BY_SIDE
    assert page.count("<li><code>") == PAGE_FLIPS
    assert len(re.findall(r'<section id="doc-\d+">', page)) == SIDE_BY_SIDE
    assert more(broke - PAGE_FLIPS) in page and more(broke - SIDE_BY_SIDE) in page


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["table", "md"])
def test_the_diff_lists_a_few_flips(flipped: tuple[Path, Path, Path], fmt: str) -> None:
    broke = _broke(flipped)
    code, out, err = cli("diff", *flipped, "--format", fmt, "--resamples", "10")
    assert code == 0, err
    line = next(x for x in out.splitlines() if "fully correct → not" in x)
    assert f"({broke})" in line or f" {broke} " in line
    assert line.count("doc-") == LISTED and line.endswith(more(broke - LISTED))
