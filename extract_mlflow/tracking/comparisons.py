"""Logging comparisons: the two runs of a `diff` and the comparison itself, stored under
``eval/`` on the run that was compared (the candidate, B)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .log import log_report
from .payload import ARTIFACT_DIR
from .runs import LoggedRun, Tracker

if TYPE_CHECKING:
    from ..diffing import Diff

DIFF_ARTIFACT = "diff.json"


def log_texts(run_id: str, texts: Mapping[str, str], *, tracking_uri: str | None = None) -> None:
    """Store each text as ``eval/<name>`` on run `run_id` (the run may be finished)."""
    with Tracker(tracking_uri) as tracker, tracker.errors():
        for name, text in texts.items():
            tracker.client.log_text(run_id, text, f"{ARTIFACT_DIR}/{name}")


def log_diff(
    result: Diff,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> tuple[LoggedRun, LoggedRun]:
    """Log A's and B's evaluations as two runs (named after their labels), then the diff as
    ``eval/diff.json`` (and the `extra` texts, by name) on B's run."""
    if result.report_a is None or result.report_b is None:
        raise ValueError("the diff holds no reports to log")
    c = result.comparison
    runs = tuple(
        log_report(
            report,
            tracking_uri=tracking_uri,
            experiment=experiment,
            run_name=label,
            reuse_caller_run=False,
        )
        for report, label in ((result.report_a, c.baseline_ref), (result.report_b, c.candidate_ref))
    )
    log_texts(runs[1].run_id, {DIFF_ARTIFACT: result.to_json(), **(extra or {})},
              tracking_uri=tracking_uri)  # fmt: skip
    return runs[0], runs[1]
