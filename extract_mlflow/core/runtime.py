"""Process-level helpers shared by the hot paths."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a block that builds many objects but no cycles
    (parsing JSONL, scoring). Reference counting still frees everything; what is saved are the
    collector's full passes, which walk every loaded document again and again (~30% of the
    scoring time on 10,000 documents)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
