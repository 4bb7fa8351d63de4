"""paired: aligning two runs' count frames, their count matrix and the document flips, pinned
to a plain pandas reference (tests/support/paired_reference.py) on generated frames; and reading a
logged ``documents.parquet`` with its counts held narrow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import paired_reference as ref

from extract_mlflow.core.keys import keys_from_frame
from extract_mlflow.core.narrow import narrowest
from extract_mlflow.errors import InputError
from extract_mlflow.evaluation import paired, pairing
from extract_mlflow.io.documents import read_counts

IDS = ["a", "b", "B", "doc-10", "doc-9", "é", "z z", "10", "9", "", "ä1", "a\x00"]
STATUSES = ["scored", "parse_failure", "missing"]
FIELDS = ["x", "items[].q", "v.n"]


@st.composite
def frames(draw: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two count frames shaped like ``report_frame(report, "counts")``: overlapping ids in any
    order, fields on one side only, counts in any integer type (or whole floats), a status, a
    layout score and a structure ratio on either side or both."""
    dtype = draw(st.sampled_from([np.int64, np.uint8, np.int16, np.uint16, np.float64]))
    top = (
        draw(st.sampled_from([4, 255, 300]))
        if dtype != np.uint8
        else draw(st.sampled_from([4, 255]))
    )
    out = []
    for _ in range(2):
        ids = draw(st.lists(st.sampled_from(IDS), unique=True, max_size=len(IDS)))
        fields = draw(st.lists(st.sampled_from(FIELDS), unique=True))
        n = len(ids)

        def counts(n: int = n) -> np.ndarray:
            return np.array(draw(st.lists(st.integers(0, top), min_size=n, max_size=n)), dtype)

        data: dict[str, Any] = {"id": ids, "tp": counts(), "fp": counts(), "fn": counts()}
        if draw(st.booleans()):
            data["status"] = draw(st.lists(st.sampled_from(STATUSES), min_size=n, max_size=n))
        if draw(st.booleans()):
            scores = st.one_of(st.just(np.nan), st.sampled_from([0.0, 0.25, 1 / 3, 1.0]))
            data["layout_score"] = draw(st.lists(scores, min_size=n, max_size=n))
        for f in fields:
            for pre in ref.PREFIXES:
                data[pre + f] = counts()
        if draw(st.booleans()):
            dens = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=n, max_size=n))
            data["structure/teds_num"] = [d * 0.3 for d in dens]
            data["structure/teds_den"] = dens
        out.append(pd.DataFrame(data))
    return out[0], out[1]


def as_read_before(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as compare read ``documents.parquet`` before counts were read narrow: every
    integer column int64 (the reference's pandas arithmetic then cannot overflow)."""
    wide = {c: "int64" for c in frame.columns if frame[c].dtype.kind in "ui"}
    return frame.astype(wide)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(pair=frames())
def test_the_paired_count_matrix_is_the_pandas_reference(
    pair: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    b, c = pair
    paired_docs = pairing.align(b, c)
    expected_b, _, b_only, c_only = ref.aligned(b, c)
    assert pairing.id_texts(paired_docs.ids) == list(expected_b.index)
    assert (paired_docs.baseline_only, paired_docs.candidate_only) == (b_only, c_only)
    if not len(paired_docs):
        return
    layout = paired._layout(b, c, {**keys_from_frame(b), **keys_from_frame(c)})
    got = pairing.paired_counts(b, c, paired_docs, layout)
    expected = ref.paired_matrix(as_read_before(b), as_read_before(c))
    assert got.shape == expected.shape
    assert got.astype(np.float64).tobytes() == expected.tobytes()
    assert got.flags.f_contiguous  # a column's sum adds its values in the reference's order
    if got.dtype.kind in "ui":  # whole counts are held in a narrow integer type
        assert got.dtype.itemsize <= 2
    full = got.sum(axis=0, keepdims=True, dtype=np.float64)
    assert full.tobytes() == expected.sum(axis=0, keepdims=True).tobytes()


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(pair=frames(), top=st.integers(0, 12))
def test_flips_and_regressed_documents_are_the_pandas_reference(
    pair: tuple[pd.DataFrame, pd.DataFrame], top: int
) -> None:
    b, c = pair
    got = paired.document_view(b, c, top)
    expected = ref.flips(as_read_before(b), as_read_before(c), top)
    assert list(got.broke) == expected["broke"]
    assert list(got.fixed) == expected["fixed"]
    assert [d.to_dict() | {"delta_f1": None} for d in got.regressed] == [
        d | {"delta_f1": None} for d in expected["regressed"]
    ]


def test_one_alignment_serves_the_bootstrap_and_the_flips() -> None:
    """paired_view gives what paired_bootstrap and document_view give apart."""
    rng = np.random.default_rng(4)
    ids = [f"d{i:03d}" for i in range(200)]

    def frame(order: np.ndarray) -> pd.DataFrame:
        tp, fp, fn = rng.integers(0, 4, size=(3, 200))
        data = {"id": ids, "status": ["scored"] * 200, "tp": tp, "fp": fp, "fn": fn}
        data |= {"field_tp/x": tp, "field_fp/x": fp, "field_fn/x": fn}
        return pd.DataFrame(data).iloc[order]

    b, c = frame(rng.permutation(200)), frame(rng.permutation(200)[:180])
    boot, flips = paired.paired_view(b, c, resamples=300, seed=3, top=5)
    assert boot == paired.paired_bootstrap(b, c, resamples=300, seed=3)
    assert flips == paired.document_view(b, c, 5)


@pytest.mark.parametrize(
    ("ids", "repeated"), [(["a", "b", "a"], "a"), (["x", "y", "y", "x"], "y"), ([1, "1"], "1")]
)
def test_a_repeated_id_names_its_first_repeat(ids: list[Any], repeated: str) -> None:
    frame = pd.DataFrame({"id": ids, "tp": 1, "fp": 0, "fn": 0})
    with pytest.raises(
        InputError, match=f"baseline documents frame repeats document id '{repeated}'"
    ):
        pairing.align(frame, frame.iloc[:1])


def test_narrowest_keeps_every_value() -> None:
    for values, dtype in [
        ([0, 255], np.uint8),
        ([0, 256], np.uint16),
        ([-1, 127], np.int8),
        ([-1, 128], np.int16),
        ([0, 2**40], np.uint64),
        ([], np.uint8),
    ]:
        got = narrowest(np.array(values, dtype=np.int64))
        assert got.dtype == dtype and got.tolist() == values
    floats = np.array([0.5, 2.0])
    assert narrowest(floats) is floats


# -- reading documents.parquet -------------------------------------------------------------


def test_read_counts_reads_what_pandas_reads_with_narrow_counts(tmp_path: Path) -> None:
    n = 1000
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "id": [f"doc-{i:05d}" for i in range(n)],
            "status": rng.choice(STATUSES, n),
            "tp": rng.integers(0, 300, n),
            "fp": rng.integers(0, 3, n),
            "fn": -rng.integers(0, 3, n),  # not a count compare accepts, but read as it is
            "layout_score": rng.random(n),
            "field_tp/x": pd.array(rng.integers(0, 3, n), dtype="Int64"),  # with nulls below
            "structure/teds_num": rng.random(n),
        }
    )
    frame.loc[3, "field_tp/x"] = pd.NA
    path = tmp_path / "documents.parquet"
    frame.to_parquet(path, index=False)
    got, expected = read_counts(path), pd.read_parquet(path)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    assert list(got.columns) == list(expected.columns)
    assert [str(got[c].dtype) for c in ("tp", "fp", "fn")] == ["uint16", "uint8", "int8"]
    for column in ("id", "status", "layout_score", "field_tp/x", "structure/teds_num"):
        assert got[column].dtype == expected[column].dtype, column


def test_ids_with_a_lone_surrogate_pair_in_code_point_order() -> None:
    """An id JSON spelled with a lone surrogate (no UTF-8 text holds it) is paired as its
    bytes, in the same code point order as str, on one side or both."""
    ids = ["a\ud800", "b", "é", "a"]
    b = pd.DataFrame({"id": pd.Series(ids, dtype=object), "tp": [1, 2, 3, 4], "fp": 0, "fn": 1})
    c = pd.DataFrame({"id": ["é", "b", "z", "a"], "tp": 1, "fp": 0, "fn": 0})
    got = pairing.align(b, c)
    assert pairing.id_texts(got.ids) == ["a", "b", "é"]
    assert (got.baseline_rows.tolist(), got.candidate_rows.tolist()) == ([3, 1, 2], [3, 1, 0])
    assert (got.baseline_only, got.candidate_only) == (("a\ud800",), ("z",))
    both = pairing.align(b, b.iloc[::-1])
    assert pairing.id_texts(both.ids) == sorted(ids)
    assert paired.document_view(b, c, 5).fixed == ("a", "b", "é")
