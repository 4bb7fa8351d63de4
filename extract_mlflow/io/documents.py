"""Reading a logged run's per-document counts (``eval/documents.parquet``) for ``compare``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.arrow import system_pool
from ..core.narrow import narrowest

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd


def read_counts(path: Path) -> pd.DataFrame:
    """A run's ``documents.parquet`` as a frame, read one column at a time: its integer columns
    (every count) in the narrowest integer type that holds each
    (:func:`~..core.narrow.narrowest`: a byte a count for most runs, an eighth of int64);
    the other columns as pandas reads them.

    The file is memory-mapped and Arrow's buffers come from the system allocator while it is
    read (:func:`~..core.arrow.system_pool`), so what the reading used is given back, not kept
    by Arrow's own allocator beside the frame."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: dict[str, Any] = {}
    with system_pool():
        file = pq.ParquetFile(path, memory_map=True)
        for name in file.schema_arrow.names:
            table = file.read(columns=[name], use_threads=False)
            column = table.column(0)
            if pa.types.is_integer(column.type) and not column.null_count:
                columns[name] = narrowest(column.to_numpy())
            else:  # with the file's pandas metadata (string, nullable and categorical types)
                columns[name] = table.to_pandas()[name]
            del table, column
    return pd.DataFrame(columns, copy=False)  # a block per column: no consolidated copy
