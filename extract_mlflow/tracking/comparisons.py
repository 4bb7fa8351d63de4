"""Logging comparisons: the two runs of a `diff` and the comparison itself, stored under
``eval/`` on the run that was compared (the candidate, B).

Every `compare` and `promote` keeps its comparison: the page and the JSON go to a folder of
their own on the candidate's run, ``eval/comparisons/<baseline run id>/<UTC time>/``
(``none`` for no baseline run), never over an earlier one. The run tag
``extract_mlflow.comparison`` points to the latest folder, and each new page and JSON list the
comparisons stored before it (found with ``list_artifacts``, nothing rewritten), so every earlier
verdict stays readable: ``MlflowClient().list_artifacts(run_id, "eval/comparisons")``.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..comparison import LoggedComparison
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
JSON_ARTIFACT = "comparison.json"
COMPARISONS_DIR = f"{ARTIFACT_DIR}/comparisons"
LATEST_TAG = "extract_mlflow.comparison"
"""The candidate run's tag naming the folder of its latest comparison."""
NO_BASELINE_RUN = "none"
TIME_FORMAT = "%Y%m%dT%H%M%S.%fZ"  # UTC, sortable as text, no ':' (safe in artifact paths)
PAGE_NOT_LOGGED = "the comparison was not logged to {run}: {why}"


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


def comparison_folder(baseline_run: str | None, now: datetime | None = None) -> LoggedComparison:
    """The folder a comparison against `baseline_run` (None: no baseline) made `now` (default:
    the current UTC time) is stored in."""
    when = (now or datetime.now(UTC)).astimezone(UTC).strftime(TIME_FORMAT)
    baseline = baseline_run or NO_BASELINE_RUN
    return LoggedComparison(f"{COMPARISONS_DIR}/{baseline}/{when}", baseline, when)


def stored_comparisons(tracker: Tracker, run_id: str) -> tuple[LoggedComparison, ...]:
    """The comparisons stored on `run_id`, newest first (one listing per baseline run)."""
    client, found = tracker.client, []
    for baseline in client.list_artifacts(run_id, COMPARISONS_DIR):
        if not baseline.is_dir:
            continue
        name = posixpath.basename(baseline.path)
        for entry in client.list_artifacts(run_id, baseline.path):
            if entry.is_dir:
                found.append(LoggedComparison(entry.path, name, posixpath.basename(entry.path)))
    return tuple(sorted(found, key=lambda c: (c.logged_at, c.path), reverse=True))


def log_comparison(
    comparison: Comparison,
    run_id: str,
    here: LoggedComparison,
    flips: tuple[Flip, ...] | None = None,
    *,
    record: Callable[[Comparison], str] | None = None,
    tracking_uri: str | None = None,
    tracker: Tracker | None = None,
) -> Comparison:
    """Store the comparison on `run_id` (the candidate's run) in the folder `here`
    (:func:`comparison_folder`): the page as ``comparison.html`` and ``record(comparison)``
    (default: its ``--format json``) as ``comparison.json``; then point the run's
    ``extract_mlflow.comparison`` tag at it. The comparison comes back with `flips` (what the
    page shows), where it is stored and the comparisons stored before it, all shown on its
    page. A store that refuses does not undo the verdict: the comparison then comes back with a
    note saying why it is missing (and no `logged_as`)."""
    from ..views.page import comparison_page

    if tracker is None:
        with Tracker(tracking_uri) as fresh:
            return log_comparison(comparison, run_id, here, flips, record=record, tracker=fresh)
    shown = dataclasses.replace(comparison, flips=flips)
    try:
        with tracking_errors(tracker.uri):
            earlier = stored_comparisons(tracker, run_id)
            stored = dataclasses.replace(shown, logged_as=here, earlier=earlier)
            texts = {
                PAGE_ARTIFACT: comparison_page(stored, flips),
                JSON_ARTIFACT: record(stored) if record else stored.to_json(),
            }
            for name, text in texts.items():
                tracker.client.log_text(run_id, text, f"{here.path}/{name}")
            tracker.client.set_tag(run_id, LATEST_TAG, here.path)
    except TrackingError as exc:
        note = PAGE_NOT_LOGGED.format(run=run_id, why=exc)
        return dataclasses.replace(shown, notes=(*shown.notes, note))
    return stored
