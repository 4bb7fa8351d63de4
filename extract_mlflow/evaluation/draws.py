"""The bootstrap's draws through the optional C loop (``_resample``, built with the compiled
modules; see setup.py), or None where numpy must draw.

``numpy.random.default_rng(seed).integers(0, n, size, dtype=np.int64)`` is the reference: the
C loop steps the same PCG64 generator from the state numpy seeded and maps each 32-bit half to
[0, n) as numpy does, so it draws the same documents while it sums their counts (or counts
their weights) in one pass, with no index block in memory. It is used only when

- the module was built and ``EXTRACT_MLFLOW_PURE`` is not set (pure Python is then pure),
- the generator numpy seeds is PCG64 and 1 < n < 2**32 (numpy's 32-bit path), and
- its first draws in this process equal numpy's on the installed numpy (:func:`kernel`): a
  numpy that drew otherwise would get numpy's own draws, not ours.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from .._compiled import pure_requested

__all__ = ["KernelStream", "kernel", "kernel_stream"]

log = logging.getLogger(__name__)

_MASK64 = (1 << 64) - 1
_CHECKS = ((2, 0, 513), (1000, 20261201, 4097), (99_991, 7, 4097), (2**32 - 1, 3, 257))
"""(n, seed, draws) the C loop must draw exactly as numpy before it is used"""


class KernelStream:
    """One seeded generator's draws in [0, n) through the C loop; each call goes on where the
    last one stopped, as consecutive calls to numpy's ``integers`` do."""

    def __init__(self, module: ModuleType, n: int, state: tuple[int, int, int, int]) -> None:
        self._module, self.n = module, n
        self._state, self._inc = state[0], state[1]
        self._half = state[2:]

    @classmethod
    def seeded(cls, module: ModuleType, n: int, seed: int | None) -> KernelStream | None:
        """The stream of ``numpy.random.default_rng(seed)``; None when it is not PCG64."""
        state: Mapping[str, Any] = np.random.default_rng(seed).bit_generator.state
        if state.get("bit_generator") != "PCG64":
            return None
        inner = state["state"]
        at = (inner["state"], inner["inc"], state["has_uint32"], state["uinteger"])
        return cls(module, n, at)

    def _call(self, name: str, *arrays: npt.NDArray[Any]) -> None:
        s, inc = self._state, self._inc
        hi, lo, has_half, half = getattr(self._module, name)(
            s >> 64, s & _MASK64, inc >> 64, inc & _MASK64, *self._half, self.n, *arrays
        )
        self._state, self._half = (hi << 64) | lo, (has_half, half)

    def draw(self, out: npt.NDArray[np.uint32]) -> None:
        """Fill `out` (uint32, C-contiguous) with the next draws."""
        self._call("draw", out)

    def gather_sums(self, counts: npt.NDArray[Any], out: npt.NDArray[np.int64]) -> None:
        """Each row of `out` (resamples × k): the sum, as int64, of n drawn rows of `counts`
        (n × k integers of any width, C-contiguous)."""
        self._call("gather_sums", counts, out)

    def weights(self, out: npt.NDArray[Any]) -> None:
        """Each row of `out` (float32 or float64, rows × n): how often each document is drawn
        in that resample."""
        self._call("weights", out)


@cache
def kernel() -> ModuleType | None:
    """The C loop's module when it may be used in this process (see the module's doc)."""
    if pure_requested():  # the pure-Python package: every module, and numpy's draws
        return None
    try:
        from . import _resample  # type: ignore[attr-defined]
    except ImportError:
        return None
    module: ModuleType = _resample
    for n, seed, size in _CHECKS:
        expected = np.random.default_rng(seed).integers(0, n, size=size, dtype=np.int64)
        stream = KernelStream.seeded(module, n, seed)
        got = np.empty(size, dtype=np.uint32)
        if stream is not None:
            stream.draw(got[: size // 2])  # in two calls: the state carries over
            stream.draw(got[size // 2 :])
        if stream is None or not np.array_equal(got, expected):
            log.warning("the C bootstrap loop draws unlike this numpy: numpy draws instead")
            return None
    return module


def kernel_stream(n_docs: int, seed: int | None) -> KernelStream | None:
    """The C loop's stream for `n_docs` documents and `seed`, or None where numpy draws."""
    if not 1 < n_docs < 2**32:
        return None
    module = kernel()
    return None if module is None else KernelStream.seeded(module, n_docs, seed)
