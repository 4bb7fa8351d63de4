"""Reading a logged run's per-document counts (``eval/documents.parquet``) for ``compare``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.narrow import narrowest

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd


def read_counts(path: Path) -> pd.DataFrame:
    """A run's ``documents.parquet`` as a frame, read one column at a time: its integer columns
    (every count) in the narrowest integer type that holds each
    (:func:`~..core.narrow.narrowest`: a byte a count for most runs, so a 100,000-document
    run takes ~13 MB rather than ~90 MB); the other columns as pandas reads them."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    columns: dict[str, Any] = {}
    for name in file.schema_arrow.names:
        table = file.read(columns=[name], use_threads=False)
        column = table.column(0)
        if pa.types.is_integer(column.type) and not column.null_count:
            columns[name] = narrowest(column.to_numpy())
        else:  # with the file's pandas metadata (string, nullable and categorical types)
            columns[name] = table.to_pandas()[name]
    return pd.DataFrame(columns)
