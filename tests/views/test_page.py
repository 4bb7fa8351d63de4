"""The comparison page (`diff --format html`, `compare --format html`, the `comparison.html` of
each kept comparison): self-contained, escaped, rendered by a real headless Chromium, logged by
compare and promote."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import uuid
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.diff import GOLD, PRED_A, PRED_B, write_jsonl

from extract_mlflow import compare, diff, evaluate
from extract_mlflow.cli import main
from extract_mlflow.diffing import Sides, flip_sides
from extract_mlflow.views.page import comparison_page, diff_page

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "invoices"
HOSTILE = (
    '</td></table><script>document.body.setAttribute("data-pwned", "1")</script>'
    "<img src=x onerror=document.body.setAttribute('data-pwned','1')>"
)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(r["id"]): r for r in rows}


def small_page() -> str:
    d = diff(evaluate(GOLD, PRED_A), evaluate(GOLD, PRED_B))
    return diff_page(d, flip_sides(d, by_id(GOLD), by_id(PRED_A), by_id(PRED_B)))


def hostile_page() -> str:
    gold = [{"id": HOSTILE, HOSTILE: "x", "b": 1}, {"id": "ok", HOSTILE: "y", "b": 2}]
    pred_a = [{"id": HOSTILE, HOSTILE: "x", "b": 1}, {"id": "ok", HOSTILE: HOSTILE, "b": 2}]
    pred_b = [{"id": HOSTILE, HOSTILE: HOSTILE, "b": 1}, {"id": "ok", HOSTILE: "y", "b": 2}]
    d = diff(evaluate(gold, pred_a), evaluate(gold, pred_b), labels=(HOSTILE, HOSTILE))
    sides = flip_sides(d, by_id(gold), by_id(pred_a), by_id(pred_b))
    assert len(sides) == 2
    return diff_page(d, sides)


LINKING = {"src", "href", "action", "srcset", "poster", "data", "formaction"}
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "br", "code",
    "strong", "table", "thead", "tbody", "tr", "th", "td", "svg", "rect", "line", "ul", "li",
    "a", "section", "mark", "script",
}  # fmt: skip


class Tags(HTMLParser):
    """Every start tag of a page with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def test_hostile_text_is_escaped() -> None:
    page = hostile_page()
    assert page.count("<script>") == 1  # ours, at the end
    assert "<img" not in page and "pwned" not in page.split("<script>")[1]
    assert "&lt;script&gt;document.body.setAttribute(&quot;data-pwned&quot;" in page
    assert page.count("<table") == page.count("</table>")


def test_the_page_fetches_nothing() -> None:
    for page in (small_page(), hostile_page()):
        assert 'http-equiv="Content-Security-Policy" content="default-src \'none\';' in page
        tags = Tags()
        tags.feed(page)
        refs = [v or "" for _, attrs in tags.found for k, v in attrs if k in LINKING]
        assert refs and all(r.startswith("#") for r in refs), refs
        assert {t for t, _ in tags.found} <= ALLOWED_TAGS
        assert "@import" not in page and "url(" not in page and "//" not in page.split("<style>")[1]


def test_small_page_content() -> None:
    page = small_page()
    assert '<table id="fields">' in page and '<table id="overview">' in page
    # field b: 0.667 -> 0.333, a: 0.667 -> 1.000 (hand-checked in test_diff)
    assert re.search(
        r'<code>b</code></td><td data-v="[^"]+">0\.667</td><td data-v="[^"]+">0\.333', page
    )
    assert re.search(r'<td data-v="-0\.333333[0-9]*" class="neg">-0\.333</td>', page)
    assert "<h3>not → fully correct (1)</h3>" in page and "<h3>fully correct → not (1)</h3>" in page
    assert '<a href="#doc-0">d1</a></code>: changed fields: b' in page


def test_side_by_side_highlights_the_wrong_leaves() -> None:
    d = diff(evaluate(GOLD, PRED_A), evaluate(GOLD, PRED_B))
    gold = by_id(GOLD)
    sides = flip_sides(d, gold, by_id(PRED_A), by_id(PRED_B))
    assert sides["d1"] == Sides(gold["d1"], PRED_A[0], PRED_B[0], {}, {"b": ("w",)}, "id")
    page = diff_page(d, sides)
    d1 = page.split('<section id="doc-0">')[1].split("</section>")[0]
    assert (
        '<tr><td><code>b</code></td><td>x</td><td>x</td><td class="wrong"><mark>w</mark></td>' in d1
    )
    d2 = page.split('<section id="doc-1">')[1].split("</section>")[0]
    assert (
        '<tr><td><code>a</code></td><td>2</td><td class="wrong"><mark>5</mark></td><td>2</td>' in d2
    )


def test_comparison_page_without_documents() -> None:
    """compare's page: the verdict, the fields, the flipped ids (no side-by-side)."""
    a, b = evaluate(GOLD, PRED_A), evaluate(GOLD, PRED_B)
    c = compare(a, b, [{"metric": "f1", "max_drop": 0.01}], min_documents=0)
    page = comparison_page(c)
    assert "<strong>PASSED: 1 checked</strong>" in page
    assert '<table id="fields">' in page and "<code>field_f1/b</code>" not in page
    assert "<li><code>d2</code></li>" in page and "<section" not in page


def test_diff_format_html_writes_one_file(tmp_path: Path) -> None:
    gold, a, b = (write_jsonl(tmp_path / n, rows) for n, rows in
                  (("g.jsonl", GOLD), ("a.jsonl", PRED_A), ("b.jsonl", PRED_B)))  # fmt: skip
    out = tmp_path / "page.html"
    result = invoke("diff", str(gold), str(a), str(b), "--format", "html", "--out", str(out))
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and '<section id="doc-1">' in page


# -- a real browser ----------------------------------------------------------------------------
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is missing in CI (.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium)")
    return found


def render_in_chromium(page: Path, tmp_path: Path) -> tuple[str, str]:
    """The DOM after the page's scripts ran, and the browser's log (console messages)."""
    cmd = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri(),
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # helpers (zygote, gpu) go with it
    assert proc.returncode == 0, err[-2000:]
    return out, err


def console_problems(log: str) -> list[str]:
    return [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line]


@pytest.mark.slow
def test_chromium_renders_the_page_and_sorts_it(tmp_path: Path) -> None:
    args = [str(EXAMPLE / n) for n in ("gold.jsonl", "pred_improved.jsonl", "pred_baseline.jsonl")]
    out = tmp_path / "page.html"
    result = invoke("diff", *args, "--config", str(EXAMPLE / "config.toml"),
                    "--format", "html", "--out", str(out))  # fmt: skip
    assert result.exit_code == 0, result.output
    dom, log = render_in_chromium(out, tmp_path)
    assert console_problems(log) == []
    assert '<html lang="en" data-ready="1">' in dom  # the script ran to its end
    assert '<table id="fields" data-sorted="delta asc">' in dom
    body = dom.split('<table id="fields"')[1].split("</tbody>")[0]
    deltas = [float(v) for v in re.findall(r'<td data-v="([^"]+)" class="(?:neg|pos)"', body)]
    assert len(deltas) == 18 and deltas == sorted(deltas)  # the sort ran: worst first
    assert dom.count('<section id="doc-') == 6


@pytest.mark.slow
def test_chromium_runs_no_hostile_script(tmp_path: Path) -> None:
    page = tmp_path / "hostile.html"
    page.write_text(hostile_page(), encoding="utf-8")
    dom, log = render_in_chromium(page, tmp_path)
    assert console_problems(log) == []
    assert 'data-pwned="1"' not in dom and "<img" not in dom
    assert 'data-ready="1"' in dom  # our own script did run


@pytest.mark.slow
def test_chromium_reports_console_errors(tmp_path: Path) -> None:
    """The check above can fail: a page with a broken script is caught."""
    page = tmp_path / "broken.html"
    page.write_text(small_page().replace('getElementById("fields")', "missingFn()"), "utf-8")
    dom, log = render_in_chromium(page, tmp_path)
    assert any("Uncaught" in line for line in console_problems(log))
    assert 'data-ready="1"' not in dom


# -- compare and promote log the page ------------------------------------------------------------
def test_compare_and_promote_log_the_page(mlflow_server: Any, tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    from extract_mlflow import log_report
    from extract_mlflow.tracking.comparisons import LATEST_TAG

    uri, model = mlflow_server.uri, f"page-{uuid.uuid4().hex[:8]}"
    config = str(EXAMPLE / "config.toml")
    runs = []
    for pred in ("pred_baseline.jsonl", "pred_improved.jsonl"):
        report = evaluate(EXAMPLE / "gold.jsonl", EXAMPLE / pred, config)
        runs.append(log_report(report, tracking_uri=uri, experiment=model, register=model).run_id)
    client = MlflowClient(uri)
    client.set_registered_model_alias(model, "champion", "1")
    assert "eval/comparisons" not in {a.path for a in client.list_artifacts(runs[1], "eval")}

    def latest_page() -> Path:
        folder = client.get_run(runs[1]).data.tags[LATEST_TAG]
        return Path(client.download_artifacts(runs[1], f"{folder}/comparison.html", str(tmp_path)))

    result = invoke("promote", model, "2", "--tracking-uri", uri, "--max-drop", "f1=0.01")
    assert result.exit_code == 0, result.output
    promoted = latest_page()
    assert "changed fields: line_items[].description" in promoted.read_text(encoding="utf-8")
    promoted.unlink()
    out = tmp_path / "compare.html"
    result = invoke("compare", runs[0], runs[1], "--tracking-uri", uri, "--max-drop", "f1=0.01",
                    "--format", "html", "--out", str(out))  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = out.read_text(encoding="utf-8")
    page = latest_page().read_text(encoding="utf-8")
    for html in (shown, page):
        assert '<table id="fields">' in html and "PASSED" in html
        assert all(i in html for i in ("inv-003", "inv-005", "inv-007", "inv-008", "inv-009"))
    assert shown == page  # the printed page is the logged one, changed fields included
    assert "changed fields: line_items[].description" in page
    assert "Earlier comparisons (1), newest first:" in page  # the promote's, kept
    data = json.loads(invoke("compare", runs[0], runs[1], "--tracking-uri", uri,
                             "--max-drop", "f1=0.01", "--format", "json").stdout)  # fmt: skip
    assert data["passed"] is True  # JSON unchanged by the page
