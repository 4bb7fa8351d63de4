"""The optional mypyc build: compiled and pure Python score byte-identically, EXTRACT_MLFLOW_PURE
forces the `.py` sources, and the guard never runs a compiled module whose source changed since
the build (an edited checkout of an editable install)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import extract_mlflow
from extract_mlflow import _compiled

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "invoices"
sys.path.insert(0, str(ROOT / "benchmarks"))

import synth  # noqa: E402


def _require_compiled() -> tuple[str, ...]:
    """The compiled modules; skip when there are none, except in CI (.ci/run compiles)."""
    compiled = extract_mlflow.compiled_modules()
    if not compiled:
        reason = "nothing is compiled in this install (it needs `pip install -e .` and gcc)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI installs the compiled build, but {reason}")
        pytest.skip(reason)
    return compiled


def _env(pure: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != _compiled.PURE_ENV}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if pure:
        env[_compiled.PURE_ENV] = "1"
    return env


def _score(gold: Path, pred: Path, pure: bool) -> bytes:
    cmd = [sys.executable, "-m", "extract_mlflow", "score", str(gold), str(pred)]
    cmd += ["--format", "json", "--no-log"]
    return subprocess.run(cmd, env=_env(pure), capture_output=True, check=True).stdout


def _module_file(module: str, pure: bool) -> str:
    code = f"import {module} as m, extract_mlflow as e; print(m.__file__, e.compiled_modules())"
    return subprocess.run(
        [sys.executable, "-c", code], env=_env(pure), capture_output=True, text=True, check=True
    ).stdout


def _write_jsonl(path: Path, docs: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


@pytest.mark.parametrize("pred", ["pred_baseline.jsonl", "pred_improved.jsonl"])
def test_compiled_and_pure_score_the_example_byte_identically(pred: str) -> None:
    _require_compiled()
    compiled = _score(EXAMPLE / "gold.jsonl", EXAMPLE / pred, pure=False)
    assert compiled == _score(EXAMPLE / "gold.jsonl", EXAMPLE / pred, pure=True)
    assert json.loads(compiled)["micro"]["tp"] > 0


def test_compiled_and_pure_score_a_generated_set_byte_identically(tmp_path: Path) -> None:
    _require_compiled()
    gold, pred, _ = synth.make_dataset(400, 17, change=0.3, drop=0.2, extra=0.1)
    g = _write_jsonl(tmp_path / "gold.jsonl", gold)
    p = _write_jsonl(tmp_path / "pred.jsonl", pred)
    assert _score(g, p, pure=False) == _score(g, p, pure=True)


def test_the_pure_env_var_loads_every_compiled_module_from_its_source() -> None:
    compiled = _require_compiled()
    for module in compiled:
        assert _module_file(module, pure=False).split()[0].endswith(".so"), module
        out = _module_file(module, pure=True)
        assert out.split()[0].endswith(".py") and out.rstrip().endswith("()"), (module, out)


def test_the_package_installs_its_guard_before_any_submodule() -> None:
    code = (
        "import sys, extract_mlflow\n"
        "from extract_mlflow._compiled import SourceGuard\n"
        "first = sys.meta_path[0]\n"
        "print(isinstance(first, SourceGuard) and first.package == 'extract_mlflow')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(False), capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "True"


def test_version_says_what_runs_compiled() -> None:
    from click.testing import CliRunner

    from extract_mlflow.cli import main

    lines = CliRunner().invoke(main, ["--version"]).stdout.splitlines()
    compiled = extract_mlflow.compiled_modules()
    if compiled:
        assert lines[1].startswith("compiled with mypyc: ") and "fields.scorer" in lines[1]
    else:
        assert lines[1].startswith("pure Python (")


# -- the guard's logic on a throwaway package (no compiler needed) -----------------------------
def _package(tmp_path: Path, name: str, body: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "mod.py").write_text(body)
    return folder


def _stamp(folder: Path, module: str) -> str:
    import hashlib

    source = Path(_compiled.source_path(str(folder), module))
    data, stat = source.read_bytes(), source.stat()
    return f"{module} {len(data)} {stat.st_mtime_ns} {hashlib.sha256(data).hexdigest()}\n"


def test_the_guard_serves_sources_only_when_one_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_compiled.PURE_ENV, raising=False)
    folder = _package(tmp_path, "gpkg", "VALUE = 1\n")
    (folder / _compiled.RECORD).write_text("# header\n" + _stamp(folder, "gpkg.mod"))
    fresh = _compiled.SourceGuard("gpkg", str(folder))
    assert fresh.find_spec("gpkg.mod") is None and fresh.reason == ""

    os.utime(folder / "mod.py", ns=(1, 1))  # touched (a checkout), same bytes: still fresh
    assert _compiled.changed_sources(str(folder), _compiled.read_record(str(folder))) == []

    (folder / "mod.py").write_text("VALUE = 2\n")  # same size, new content
    stale = _compiled.SourceGuard("gpkg", str(folder))
    spec = stale.find_spec("gpkg.mod")
    assert spec is not None and spec.origin == str(folder / "mod.py")
    assert "gpkg.mod" in stale.reason
    assert stale.find_spec("gpkg.other") is None and stale.find_spec("elsewhere.mod") is None


def test_the_guard_serves_sources_when_pure_python_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _package(tmp_path, "ppkg", "VALUE = 1\n")
    (folder / _compiled.RECORD).write_text(_stamp(folder, "ppkg.mod"))
    monkeypatch.setenv(_compiled.PURE_ENV, "1")
    guard = _compiled.SourceGuard("ppkg", str(folder))
    assert guard.find_spec("ppkg.mod") is not None and _compiled.PURE_ENV in guard.reason
    monkeypatch.setenv(_compiled.PURE_ENV, "0")
    assert _compiled.SourceGuard("ppkg", str(folder)).find_spec("ppkg.mod") is None


def test_without_a_record_the_guard_finds_nothing(tmp_path: Path) -> None:
    folder = _package(tmp_path, "npkg", "VALUE = 1\n")
    guard = _compiled.SourceGuard("npkg", str(folder))
    assert guard.find_spec("npkg.mod") is None and guard.pure_modules() == frozenset()


# -- the guard against a real compiled module ------------------------------------------------
_GUARDED_INIT = """
from extract_mlflow._compiled import install_guard
install_guard(__name__, __path__[0])
"""


@pytest.mark.slow
def test_an_edited_source_wins_over_its_stale_compiled_module(tmp_path: Path) -> None:
    """Compile a throwaway module with mypyc, record its source, edit the source: importing
    must run the edited source (without the guard, the stale extension would load)."""
    pytest.importorskip("mypyc.build")
    if shutil.which(os.environ.get("CC", "cc").split()[0]) is None:
        pytest.skip("no C compiler")
    folder = _package(tmp_path, "stalepkg", "def where() -> str:\n    return 'v1'\n")
    (folder / "__init__.py").write_text(textwrap.dedent(_GUARDED_INIT))
    env = _env(pure=False)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    subprocess.run(
        [sys.executable, "-m", "mypyc", "--follow-imports=skip", "stalepkg/mod.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        check=True,
    )
    (folder / _compiled.RECORD).write_text(_stamp(folder, "stalepkg.mod"))
    probe = "import stalepkg.mod as m; print(m.where(), m.__file__.rsplit('.', 1)[-1])"

    def run() -> str:
        return subprocess.run(
            [sys.executable, "-c", probe],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    assert run() == "v1 so"  # fresh: the compiled module runs
    (folder / "mod.py").write_text("def where() -> str:\n    return 'v2'\n")
    assert run() == "v2 py"  # edited: the source runs, not the stale extension
