"""extract_mlflow: evaluate LLM document extraction and gate releases in MLflow.

Library first: every CLI command is a thin shell over these functions.

>>> from extract_mlflow import evaluate
>>> report = evaluate([{"id": "a", "total": 12.5}], [{"id": "a", "total": "12.50"}])
>>> report.micro.f1
1.0

The names below are imported on first use (PEP 562), so that importing the package (and
`extract-mlflow --help`) does not pay for numpy, scipy, pandas or mlflow.

A source install is pure Python; a release wheel may hold a few hot scoring modules compiled
with mypyc (`compiled_modules()` says which), with identical results.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__, compiled_modules
from .errors import ConfigError, ExtractMlflowError, GateError, InputError, TrackingError

if TYPE_CHECKING:
    from .comparison import Comparison, ScoredRun, compare
    from .config import Config, FieldRule
    from .config_file import load_config
    from .core.counts import Counts
    from .diffing import Diff, diff
    from .evaluation.evaluate import evaluate
    from .gate_checks import check_gates
    from .gates import Gate, load_gates
    from .report import DocumentResult, FieldResult, Report
    from .tracking.iterations import IterationLogger, log_iterations
    from .tracking.log import log_report
    from .tracking.promote import promote
    from .tracking.runs import LoggedRun
    from .views.feedback import feedback_text, field_hints
    from .views.frames import report_frame
    from .views.markdown import report_markdown
    from .views.table import report_table

_LAZY = {
    "Config": "config",
    "FieldRule": "config",
    "load_config": "config_file",
    "Counts": "core.counts",
    "DocumentResult": "report",
    "FieldResult": "report",
    "Report": "report",
    "evaluate": "evaluation.evaluate",
    "LoggedRun": "tracking.runs",
    "log_report": "tracking.log",
    "IterationLogger": "tracking.iterations",
    "log_iterations": "tracking.iterations",
    "feedback_text": "views.feedback",
    "field_hints": "views.feedback",
    "report_frame": "views.frames",
    "report_markdown": "views.markdown",
    "report_table": "views.table",
    "Comparison": "comparison",
    "ScoredRun": "comparison",
    "compare": "comparison",
    "Diff": "diffing",
    "diff": "diffing",
    "check_gates": "gate_checks",
    "Gate": "gates",
    "load_gates": "gates",
    "promote": "tracking.promote",
}

__all__ = [
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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'extract_mlflow' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
