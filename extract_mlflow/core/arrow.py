"""Arrow's buffers from the system allocator for a while: what a block made and freed is given
back, not kept beside numpy's memory by Arrow's own allocator (mimalloc keeps what a compare's
reading and pairing freed; benchmarks/README.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def system_pool() -> Iterator[None]:
    """Arrow's default memory pool is the system allocator inside the block (buffers made
    there are freed to it whenever they are freed), then the one it was before."""
    import pyarrow as pa

    before = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(before)
