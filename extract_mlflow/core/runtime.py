"""Process-level helpers shared by the hot paths."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a block that builds many objects but no cycles
    (parsing JSONL, scoring). Reference counting still frees everything; what is saved are the
    collector's full passes, which would walk every loaded document again and again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it, which a
    container or ``taskset`` narrows; else every core)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        with suppress(OSError):
            return max(1, len(affinity(0)))
    return os.cpu_count() or 1


_PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal a process gets when the thread that made it ends"""


def die_with_parent(parent: int) -> None:
    """Make this child process end when `parent` (the process that started it) ends, even
    when that one is killed with SIGKILL: on Linux the kernel sends this process SIGKILL then
    (``prctl(PR_SET_PDEATHSIG)``); a parent gone already is checked after the call, since the
    kernel only acts on deaths that follow it. Elsewhere nothing is done."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)
