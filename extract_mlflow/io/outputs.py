"""Writing what a command makes without losing a file of the user's, in one place.

- An output is never one of the inputs (:func:`refuse_inputs`): not the same file (also
  through a symbolic or hard link), not a file already inside an input folder.
- A file is written whole or not at all (:func:`write_atomic`): into a temporary file beside
  it, then renamed over it, so a failure midway leaves the earlier file as it was.
- A results folder is only written into when it is empty, new, or one this package wrote
  (:func:`claim_results_folder`: it holds :data:`RESULTS_MARKER`); files of an earlier run
  that the new one does not make are removed only from such a folder.

The messages name the path and the way out (exit code 2 in the CLI).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ..errors import InputError

__all__ = [
    "RESULTS_MARKER",
    "check_results_folder",
    "claim_results_folder",
    "refuse_inputs",
    "write_atomic",
]

RESULTS_MARKER = ".extract-mlflow-results"
"""the file that marks a results folder as this package's to rewrite"""

_MARKER_TEXT = (
    "This folder holds results written by extract-mlflow; it rewrites them here on the next "
    "run. A folder without this file is never written into unless it is empty.\n"
)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _inside(path: Path, folder: Path) -> bool:
    return path != folder and path.is_relative_to(folder)


def _in_results_folder(path: Path, below: Path) -> bool:
    """Whether a folder between `below` (excluded) and `path` is a results folder."""
    return any((p / RESULTS_MARKER).is_file() for p in path.parents if _inside(p, below))


def refuse_inputs(out: str | Path, inputs: Iterable[str | Path]) -> None:
    """An InputError when writing `out` would overwrite one of `inputs`: `out` is the same
    file as an input (resolved: through links), or an existing file inside an input folder
    (outside a results folder there). Inputs that do not exist are left out."""
    target = Path(out).resolve()
    here = _identity(target)
    if here is None:  # nothing there yet: it cannot be an input
        return
    for given in inputs:
        src = Path(given).resolve()
        if src.is_dir():
            if _inside(target, src) and not _in_results_folder(target, src):
                raise InputError(
                    f"{out}: is inside the input folder {given}; write the output elsewhere"
                )
        elif _identity(src) == here:
            raise InputError(f"{out}: is the input {given}; write the output elsewhere")


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write `data` (text as UTF-8) to `path` whole or not at all: into a temporary file in
    the same folder, then renamed over `path` (which, when a link, is followed: the file it
    points to is replaced, as writing through it would). An existing file keeps its
    permission bits; a new one gets the usual ones (the umask's). A path that is not a
    regular file (``/dev/null``, a pipe) is written directly: it cannot be replaced."""
    target = Path(path).resolve()
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        st: os.stat_result | None = target.stat()
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(target, "wb") as f:
            f.write(raw)
        return
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        if st is not None:
            os.chmod(tmp, mode)  # os.open applied the umask to it
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def check_results_folder(folder: str | Path, inputs: Iterable[str | Path] = ()) -> None:
    """An InputError unless `folder` may become a results folder: new, an empty folder, or a
    results folder already (:data:`RESULTS_MARKER`), holding none of `inputs`."""
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder; choose a folder for the results")
    if out.is_dir() and not (out / RESULTS_MARKER).is_file() and any(out.iterdir()):
        raise InputError(
            f"{out}: a folder that holds other files (no {RESULTS_MARKER} in it); give an empty "
            "or new folder for the results"
        )
    resolved = out.resolve()
    for given in inputs:
        src = Path(given).resolve()
        if src == resolved or _inside(src, resolved):
            raise InputError(f"{out}: the results folder holds the input {given}")


def claim_results_folder(folder: str | Path, inputs: Iterable[str | Path] = ()) -> Path:
    """`folder` made a results folder (created, marked) after :func:`check_results_folder`."""
    out = Path(folder)
    check_results_folder(out, inputs)
    out.mkdir(parents=True, exist_ok=True)
    if not (out / RESULTS_MARKER).is_file():
        write_atomic(out / RESULTS_MARKER, _MARKER_TEXT)
    return out
