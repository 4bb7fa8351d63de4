"""extract_mlflow: evaluate LLM document extraction and gate releases in MLflow.

Library first: every CLI command is a thin shell over these functions.

>>> from extract_mlflow import evaluate
>>> report = evaluate([{"id": "a", "total": 12.5}], [{"id": "a", "total": "12.50"}])
>>> report.micro.f1
1.0
"""

from ._version import __version__
from .config import Config, FieldRule, load_config
from .errors import ConfigError, ExtractMlflowError, GateError, InputError, TrackingError
from .report import Counts, DocumentResult, FieldResult, Report
from .scoring import evaluate

__all__ = [
    "Config",
    "ConfigError",
    "Counts",
    "DocumentResult",
    "ExtractMlflowError",
    "FieldResult",
    "FieldRule",
    "GateError",
    "InputError",
    "Report",
    "TrackingError",
    "__version__",
    "evaluate",
    "load_config",
]
