"""The public API is `extract_mlflow.__all__`: this test locks it, so the surface cannot change
by accident (add a name here on purpose, with its documentation)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import extract_mlflow

PUBLIC = [
    "Comparison",
    "Config",
    "ConfigError",
    "Counts",
    "Diff",
    "DocumentResult",
    "ExtractMlflowError",
    "FieldResult",
    "FieldRule",
    "Gate",
    "GateError",
    "InputError",
    "IterationLogger",
    "LoggedRun",
    "Report",
    "ScoredRun",
    "TrackingError",
    "__version__",
    "check_gates",
    "compare",
    "compiled_modules",
    "diff",
    "evaluate",
    "feedback_text",
    "field_hints",
    "load_config",
    "load_gates",
    "log_iterations",
    "log_report",
    "promote",
    "report_frame",
    "report_markdown",
    "report_table",
]


def test_all_is_locked() -> None:
    assert sorted(extract_mlflow.__all__) == sorted(PUBLIC)


def test_every_exported_name_resolves_and_has_a_docstring() -> None:
    for name in PUBLIC:
        value = getattr(extract_mlflow, name)
        if name != "__version__":
            assert (getattr(value, "__doc__", None) or "").strip(), f"{name} has no docstring"


def test_unknown_names_raise_attribute_error() -> None:
    try:
        extract_mlflow.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_stays_light() -> None:
    """Importing the package (and so `extract-mlflow --help`) loads neither mlflow nor the
    numeric stack: those cost seconds and are imported where they are used."""
    code = (
        "import sys, extract_mlflow, extract_mlflow.cli\n"
        "heavy = ('mlflow', 'pandas', 'scipy', 'numpy', 'matplotlib')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("args", [["--help"], ["score", "--help"], ["compare", "--help"]])
def test_help_stays_light(args: list[str]) -> None:
    """`extract-mlflow --help` (and a command's help) imports neither mlflow nor the numeric
    stack, whichever module each command's code lives in."""
    code = (
        "import sys\n"
        "from extract_mlflow.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "heavy = ('mlflow', 'pandas', 'scipy', 'numpy', 'matplotlib')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage:" in done.stdout
    assert done.stderr.strip() == "[]"
