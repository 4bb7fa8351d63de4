"""Korean and English output: one message catalogue, complete in every language with the same
placeholders; `--lang ko` (or the locale) puts Korean in every line written for people; JSON is
the same bytes in every language.

A line is "for people" unless it holds nothing but data: what is left after removing, as whole
words, (1) every string of the command's own JSON output (keys, values and the literals
true/false/null: document ids, field paths and types, error kinds, file paths, run ids, metric
keys and the field path after their ``/``, and the library's English messages that are data
there: config warnings, gate reasons, notes), (2) the stable prefixes ``error:`` and
``warning:``, (3) the abbreviations of :data:`ABBREVIATIONS` and (4) numbers, signs and
punctuation must contain no Latin letter. Every other line must contain Hangul.
"""

from __future__ import annotations

import json
import re
import string
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.mlflow_server import MlflowServer

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.core.language import language, resolve_language, tr
from extract_mlflow.core.messages import LANGUAGES, MESSAGES
from extract_mlflow.views.markdown import report_markdown
from extract_mlflow.views.table import report_table

ROOT = Path(__file__).resolve().parents[2]
E = ROOT / "examples" / "invoices"
GOLD, BASE, IMPROVED, CONFIG = (
    str(E / n) for n in ("gold.jsonl", "pred_baseline.jsonl", "pred_improved.jsonl", "config.toml")
)
ABBREVIATIONS = {"TP", "FP", "FN", "P", "R", "F1", "p", "n/a", "A", "B", "BLEU", "p1..p4", "ms"}
PREFIXES = ("error:", "warning:")
HANGUL = re.compile(r"[\uac00-\ud7a3]")
NO_LOCALE = {"EXTRACT_MLFLOW_LANG": None, "LC_ALL": None, "LC_MESSAGES": None, "LANG": None}


# -- the catalogue ----------------------------------------------------------------------------
def placeholders(text: str) -> set[tuple[str, str, str]]:
    return {
        (name, spec or "", conv or "")
        for _, name, spec, conv in string.Formatter().parse(text)
        if name is not None
    }


@pytest.mark.parametrize("key", sorted(MESSAGES))
def test_every_message_has_every_language_with_the_same_placeholders(key: str) -> None:
    texts = MESSAGES[key]
    assert set(texts) == set(LANGUAGES), f"{key}: languages {sorted(texts)}"
    assert all(texts[lang].strip() for lang in LANGUAGES), key
    shapes = {lang: placeholders(texts[lang]) for lang in LANGUAGES}
    assert shapes["ko"] == shapes["en"], key


def test_a_missing_language_or_placeholder_is_caught() -> None:
    """The two checks above fail on a bad entry (they are not vacuous)."""
    assert placeholders("{n} of {total:.0%} {x!r}") == {
        ("n", "", ""),
        ("total", ".0%", ""),
        ("x", "", "r"),
    }
    assert placeholders("문서 {n}개") != placeholders("documents {count}")


def test_language_resolution_order() -> None:
    assert resolve_language("en", {"EXTRACT_MLFLOW_LANG": "ko", "LANG": "ko_KR.UTF-8"}) == "en"
    assert resolve_language(None, {"EXTRACT_MLFLOW_LANG": "ko", "LANG": "en_US.UTF-8"}) == "ko"
    assert resolve_language(None, {"LC_ALL": "en_US.UTF-8", "LANG": "ko_KR.UTF-8"}) == "en"
    assert resolve_language(None, {"LC_MESSAGES": "ko_KR", "LANG": "C"}) == "ko"
    assert resolve_language(None, {"LANG": "ko"}) == "ko"
    assert resolve_language(None, {"LANG": "de_DE.UTF-8"}) == "en"
    assert resolve_language(None, {}) == "en"


def test_the_library_speaks_english_unless_asked() -> None:
    report = evaluate([{"id": "a", "x": 1}], [{"id": "a", "x": 2}])
    assert report_table(report).startswith("documents 1")
    with language("ko"):
        assert report_table(report).startswith("문서 1")
        assert tr("cmp.not_gated") == MESSAGES["cmp.not_gated"]["ko"]
    assert report_markdown(report).startswith("# Extraction evaluation")


# -- the rule for lines written for people ----------------------------------------------------
def data_strings(value: Any) -> set[str]:
    """Every string (dict keys included) of a JSON document, and its literals as JSON writes
    them (``true``, ``false``, ``null``: values of the inputs)."""
    if isinstance(value, dict):
        return set(value) | {s for v in value.values() for s in data_strings(v)}
    if isinstance(value, list):
        return {s for v in value for s in data_strings(v)}
    if isinstance(value, str):  # a metric key names its field too: field_f1/total -> total
        return {value, value.partition("/")[2]} - {""} if value.strip() else set()
    return {json.dumps(value)}  # true, false, null (numbers are spared anyway)


def residue(line: str, data: set[str]) -> str:
    """What of `line` is neither data, a stable prefix, an abbreviation nor a number."""
    for s in sorted(data | ABBREVIATIONS | set(PREFIXES), key=len, reverse=True):
        if s in line:
            line = re.sub(rf"(?<![\w]){re.escape(s)}(?![\w])", " ", line)
    return line


def lines_without_korean(text: str, data: set[str]) -> list[str]:
    return [
        line
        for line in text.splitlines()
        if re.search(r"[A-Za-z]", residue(line, data)) and not HANGUL.search(line)
    ]


def test_the_rule_flags_english_and_spares_data() -> None:
    data = {"inv-001", "line_items[].qty", "config: x parses no gold value"}
    assert lines_without_korean("line_items[].qty  0.500  +0.125  [-0.1, +0.2]", data) == []
    assert lines_without_korean("warning: config: x parses no gold value", data) == []
    assert lines_without_korean("inv-001 (line_items[].qty)", data) == []
    assert lines_without_korean("regressed fields (1): inv-001", data) == [
        "regressed fields (1): inv-001"
    ]
    assert lines_without_korean("나빠진 필드 (1): inv-001", data) == []


def invoke(args: list[str], env: dict[str, str | None] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args, env={**NO_LOCALE, **(env or {})})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


def unkept(out: str) -> Any:
    """JSON output without where its comparison was kept (each run of `compare` keeps its own,
    at its own time); any other output as it is."""
    try:
        data = json.loads(out)
    except json.JSONDecodeError:
        return out
    for record in (data, data.get("comparison", {})):
        for key in ("logged_as", "earlier"):
            record.pop(key, None)
    return data


def check_command(
    args: list[str],
    formats: tuple[str, ...] = ("table", "md"),
    *,
    also: list[list[str]] | None = None,
) -> None:
    """`args` in Korean: every line for people has Hangul, in every human format; the same
    output from the locale as from --lang; JSON identical in both languages and the default.
    `also`: `score` commands whose JSON holds data the command prints but its JSON leaves out
    (the config warnings of `diff`, which depend on each prediction file)."""
    jsons = {
        lang: invoke([*args, "--format", "json", *(["--lang", lang] if lang else [])])
        for lang in (None, "en", "ko")
    }
    same = {lang: (code, unkept(out)) for lang, (code, out, _) in jsons.items()}
    assert same[None] == same["en"] == same["ko"]  # exit code and stdout
    data = data_strings(json.loads(jsons["ko"][1]))
    for command in also or []:
        data |= data_strings(json.loads(invoke([*command, "--format", "json"])[1]))
    for fmt in formats:
        code, out, err = invoke([*args, "--format", fmt, "--lang", "ko"])
        assert lines_without_korean(out, data) == [], fmt
        assert lines_without_korean(err, data) == [], fmt
        assert invoke([*args, "--format", fmt], {"LANG": "ko_KR.UTF-8"}) == (code, out, err)
        assert invoke([*args, "--format", fmt], {"EXTRACT_MLFLOW_LANG": "ko"}) == (code, out, err)
        english = invoke([*args, "--format", fmt])
        assert english[0] == code
        assert not HANGUL.search(english[1] + english[2])


# -- the commands -----------------------------------------------------------------------------
def test_score_in_korean() -> None:
    check_command(["score", GOLD, BASE, "--config", CONFIG, "--no-log", "--min-f1", "0.9"])


@pytest.mark.slow
def test_diff_in_korean_and_its_page() -> None:
    args = ["diff", GOLD, BASE, IMPROVED, "--config", CONFIG]
    score = [["score", GOLD, pred, "--config", CONFIG, "--no-log"] for pred in (BASE, IMPROVED)]
    check_command(args, also=score)
    swapped = ["diff", GOLD, IMPROVED, BASE, "--config", CONFIG, "--fail-on-regression"]
    check_command(swapped, also=score)
    _, page, _ = invoke([*args, "--format", "html", "--lang", "ko"])
    assert '<html lang="ko">' in page and "결과가 뒤바뀐 문서" in page
    _, english, _ = invoke([*args, "--format", "html"])
    assert '<html lang="en">' in english and not HANGUL.search(english)


def test_an_error_line_keeps_its_prefix_and_speaks_korean(tmp_path: Path) -> None:
    out = tmp_path / "missing-folder" / "report.txt"
    code, _, err = invoke(["score", GOLD, BASE, "--no-log", "--out", str(out), "--lang", "ko"])
    assert code == 2
    assert err.startswith(f"error: {out}: 보고서를 쓸 수 없습니다: ")


@pytest.fixture(scope="module")
def runs(mlflow_server: MlflowServer) -> tuple[str, str]:
    """The invoices example's baseline and improved evaluations, logged as two runs."""
    from extract_mlflow.tracking.log import log_report

    experiment = f"lang-{uuid.uuid4().hex[:8]}"
    ids = [
        log_report(
            evaluate(GOLD, pred, CONFIG), tracking_uri=mlflow_server.uri, experiment=experiment
        ).run_id
        for pred in (BASE, IMPROVED)
    ]
    return ids[0], ids[1]


@pytest.mark.server
def test_compare_in_korean(runs: tuple[str, str], mlflow_server: MlflowServer) -> None:
    base, improved = runs
    uri = ["--tracking-uri", mlflow_server.uri]
    # the improved run as the baseline: f1 drops, so a gate fails and documents regress
    check_command(["compare", improved, base, *uri, "--max-drop", "f1=0.01", "--min", "f1=0.5"])
    check_command(["compare", base, improved, *uri, "--min", "f1=0.5"])
    code, _, err = invoke(["compare", base, improved, *uri, "--lang", "ko"])
    assert code == 2 and err.startswith("error: 평가된 게이트가 없습니다")


@pytest.mark.slow
def test_score_iterations_hints_and_their_errors_in_korean(tmp_path: Path) -> None:
    folder = ROOT / "examples" / "iterations"
    args = ["score-iterations", str(folder), "--no-log", "--results", str(tmp_path / "r")]
    _, out, err = invoke([*args, "--lang", "ko"])
    head, *rows = out.splitlines()
    assert head.split()[:2] == ["반복", "F1"] and "최고" in rows[1]
    assert f"결과를 {tmp_path / 'r'}에 저장했습니다" in err.splitlines()
    _, english, _ = invoke(args)
    assert english.split()[0] == "iteration" and not HANGUL.search(english)
    _, hints, _ = invoke(["hints", GOLD, "--for", "inv-001", "--lang", "ko"])
    assert hints.splitlines()[0] == "다른 문서의 예시 값 (정답이 아니라 형식 참고용):"
    code, _, err = invoke(["hints", GOLD, "--for", "nope"], {"LANG": "ko_KR.UTF-8"})
    assert code == 2 and err == f"error: {GOLD}: id이(가) 'nope'인 문서가 없습니다\n"
