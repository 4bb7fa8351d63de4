"""The exception tree of extract_mlflow.

::

    ExtractMlflowError            base: every error this package raises on purpose
    ├── InputError                a gold, prediction, source or approvals file, or a run ref,
    │   │                         that cannot be used
    │   └── IncomparableRunsError two runs scored differently (defined in
    │                             extract_mlflow.comparison; --allow-incomparable)
    ├── ConfigError               a config or gates file that does not validate
    ├── TrackingError             the tracking server or store cannot be reached or refuses
    ├── GateError                 a verdict the gates cannot give honestly: a significant gate
    │                             on too few paired documents (comparison.check_significance),
    │                             a promotion resting on no evaluated check (tracking.promote)
    └── NotKeptError              a per-document detail a streaming evaluation does not keep

The CLI turns any of them into one line on stderr and exit code 2. Failing a gate is not an
error: it is a result (exit code 1).
"""

from __future__ import annotations


class ExtractMlflowError(Exception):
    """Base class of every error raised on purpose by extract_mlflow."""


class InputError(ExtractMlflowError):
    """An input file (gold, predictions, sources) cannot be read as documented."""


class ConfigError(ExtractMlflowError):
    """A config (or gates) file is invalid; the message names the key."""


class TrackingError(ExtractMlflowError):
    """The MLflow tracking store or server is unreachable or rejected a request."""


class GateError(ExtractMlflowError):
    """The gates cannot give an honest verdict (too few paired documents for a significant
    gate, or no check evaluated at all)."""


class NotKeptError(ExtractMlflowError):
    """A per-document detail (field counts, mistakes) that a compact (streaming) evaluation
    does not keep in memory was asked for."""
