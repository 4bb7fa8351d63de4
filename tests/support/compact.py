"""A compact report against a retaining one: every field, the JSON text, the frames, the documents
and the views."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pandas as pd

from extract_mlflow.evaluation.compact import DocumentColumns
from extract_mlflow.evaluation.records import counts_frame
from extract_mlflow.report import DocumentResult, Report
from extract_mlflow.views.frames import report_frame
from extract_mlflow.views.markdown import report_markdown
from extract_mlflow.views.table import report_table

PLAIN = [
    "id", "status", "counts", "reason", "layout", "rows_gold", "rows_pred", "tokens",
    "latency_ms", "attributes", "position",
]  # fmt: skip


def plain(d: DocumentResult) -> dict[str, Any]:
    return {name: getattr(d, name) for name in PLAIN}


def assert_compact_same(got: Report, want: Report) -> None:
    assert type(got.documents) is type(want.documents) is DocumentColumns  # one table
    for f in dataclasses.fields(Report):
        if f.name != "documents":
            assert getattr(got, f.name) == getattr(want, f.name), f.name
    assert json.dumps(got.to_dict()) == json.dumps(want.to_dict())
    assert got.metrics() == want.metrics()
    pd.testing.assert_frame_equal(counts_frame(got), counts_frame(want))
    for kind in ("documents", "document_fields", "fields"):
        pd.testing.assert_frame_equal(report_frame(got, kind), report_frame(want, kind))
    assert [plain(d) for d in got.documents] == [plain(d) for d in want.documents]
    assert len(got.documents) == len(want.documents)
    assert plain(got.documents[-1]) == plain(want.documents[-1])
    for n in (1, 3, 10, 25):
        assert [plain(d) for d in got.worst_documents(n)] == [
            plain(d) for d in want.worst_documents(n)
        ]
    assert report_markdown(got) == report_markdown(want)
    assert report_table(got) == report_table(want)
