"""Logging comparisons: the two runs of a `diff` and the comparison itself, stored under
``eval/`` on the run that was compared (the candidate, B)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..errors import TrackingError
from .client import tracking_errors
from .log import log_report
from .payload import ARTIFACT_DIR
from .runs import LoggedRun, Tracker

if TYPE_CHECKING:
    import pandas as pd

    from ..comparison import Comparison
    from ..diffing import Diff
    from ..flips import Flip

DIFF_ARTIFACT = "diff.json"
PAGE_ARTIFACT = "comparison.html"
PAGE_NOT_LOGGED = "the comparison page was not logged to {run}: {why}"


def log_texts(
    run_id: str,
    texts: Mapping[str, str],
    *,
    tracking_uri: str | None = None,
    tracker: Tracker | None = None,
) -> None:
    """Store each text as ``eval/<name>`` on run `run_id` (the run may be finished), through
    `tracker` when one is open, else through a new one for `tracking_uri`."""
    if tracker is None:
        with Tracker(tracking_uri) as fresh:
            log_texts(run_id, texts, tracker=fresh)
        return
    with tracking_errors(tracker.uri):
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


def page_flips(
    comparison: Comparison, base: pd.DataFrame | None, cand: pd.DataFrame | None
) -> tuple[Flip, ...] | None:
    """The comparison's flipped documents with their changed fields, read from both runs'
    per-document counts (None when a run has none: the page then lists the ids alone)."""
    from ..diffing import flip_details

    if base is None or cand is None:
        return None
    return flip_details(base, cand, comparison.fixed, comparison.broke)


def log_comparison_page(
    comparison: Comparison,
    run_id: str,
    flips: tuple[Flip, ...] | None = None,
    *,
    tracking_uri: str | None = None,
    tracker: Tracker | None = None,
) -> Comparison:
    """Store the comparison page as ``eval/comparison.html`` on `run_id` (the candidate's run).
    A store that refuses the write does not undo the verdict: the comparison comes back with
    a note saying why the page is missing. The comparison comes back with `flips` (what the
    page shows)."""
    from ..views.page import comparison_page

    try:
        page = {PAGE_ARTIFACT: comparison_page(comparison, flips)}
        log_texts(run_id, page, tracking_uri=tracking_uri, tracker=tracker)
    except TrackingError as exc:
        note = PAGE_NOT_LOGGED.format(run=run_id, why=exc)
        return dataclasses.replace(comparison, notes=(*comparison.notes, note), flips=flips)
    return dataclasses.replace(comparison, flips=flips)
