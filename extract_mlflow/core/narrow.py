"""Integers held in the narrowest integer type that holds them all: the same numbers in less
memory (a run's per-document counts mostly fit in a byte).

>>> import numpy as np
>>> narrowest(np.array([0, 300])).dtype, narrowest(np.array([-1, 127])).dtype
(dtype('uint16'), dtype('int8'))
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


def narrowest_type(values: npt.NDArray[Any]) -> np.dtype[Any]:
    """The narrowest integer type that holds every one of the integer `values` (a run's counts
    mostly fit in a byte); float64 for other values."""
    if values.dtype.kind not in "uib":
        return np.dtype(np.float64)
    if values.size == 0:
        return np.dtype(np.uint8)
    low, high = int(values.min()), int(values.max())
    if low >= 0:
        return np.min_scalar_type(high)
    return np.result_type(np.min_scalar_type(low), np.min_scalar_type(-high - 1))


def narrowest(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Integer `values` in :func:`narrowest_type` (the same numbers); other values as they are."""
    return values.astype(narrowest_type(values)) if values.dtype.kind in "uib" else values
