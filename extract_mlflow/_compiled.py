"""Which modules run as mypyc-compiled code, and the guard that keeps compiled code honest.

An install may compile a few hot modules with mypyc (see setup.py); their `.py` sources still
ship and are the reference: compiled and pure Python give identical results. A compiled build
writes `_compiled.txt` beside this file, one line per compiled module: the size, mtime and sha256
of the source it was compiled from. The guard loads every listed module from its `.py` source
instead of the compiled extension when

- ``EXTRACT_MLFLOW_PURE=1`` is set, or
- a listed source no longer matches its record (a checkout edited after its editable install
  was built): then all of them, since compiled modules call one another directly, so one stale
  module could still run inside a fresh one.

Importing the package only puts the finder first on `sys.meta_path`; the record is read and
the sources checked (a stat, and a hash only when size or mtime moved) on the first import of a
listed module, which is where the cost is small next to the import itself.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib import import_module
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec, SourceFileLoader
from types import ModuleType

RECORD = "_compiled.txt"
PURE_ENV = "EXTRACT_MLFLOW_PURE"


def pure_requested() -> bool:
    """Whether ``EXTRACT_MLFLOW_PURE`` asks for pure Python (set, and not empty or 0)."""
    return os.environ.get(PURE_ENV, "").strip() not in ("", "0")


_Stamp = tuple[int, int, str]  # size, mtime_ns, sha256 of the source the module was built from


def read_record(folder: str) -> dict[str, _Stamp]:
    """The build's record in `folder` (the package folder): module -> stamp; {} when absent."""
    try:
        with open(os.path.join(folder, RECORD), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return {}
    record: dict[str, _Stamp] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            module, size, mtime_ns, digest = line.split()
            record[module] = (int(size), int(mtime_ns), digest)
    return record


def source_path(folder: str, module: str) -> str:
    """`pkg.fields.scorer` -> `<folder>/fields/scorer.py` (folder: the package's folder)."""
    return os.path.join(folder, *module.split(".")[1:]) + ".py"


def changed_sources(folder: str, record: dict[str, _Stamp]) -> list[str]:
    """The recorded modules whose source differs from the one they were compiled from."""
    changed = []
    for module, (size, mtime_ns, digest) in record.items():
        path = source_path(folder, module)
        try:
            stat = os.stat(path)
        except OSError:
            continue  # no source to fall back to: the compiled module is all there is
        if stat.st_size == size and stat.st_mtime_ns == mtime_ns:
            continue
        if stat.st_size != size or _sha256(path) != digest:
            changed.append(module)
    return changed


def _sha256(path: str) -> str:
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class SourceGuard:
    """A `sys.meta_path` finder: serves the recorded modules from their `.py` sources when pure
    Python is asked for or a source changed since the build; otherwise it finds nothing and the
    compiled extensions load as usual."""

    def __init__(self, package: str, folder: str) -> None:
        self.package, self.folder = package, folder
        self._pure: frozenset[str] | None = None
        self.reason = ""

    def pure_modules(self) -> frozenset[str]:
        """The recorded modules to load from source (decided once, on first use)."""
        if self._pure is None:
            record = read_record(self.folder)
            changed = changed_sources(self.folder, record) if record else []
            if record and pure_requested():
                self.reason = f"{PURE_ENV} is set"
            elif changed:
                self.reason = "sources changed since the build: " + ", ".join(sorted(changed))
            self._pure = frozenset(record) if self.reason else frozenset()
        return self._pure

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith(self.package + ".") or fullname not in self.pure_modules():
            return None
        source = source_path(self.folder, fullname)
        if not os.path.isfile(source):
            return None
        from importlib.util import spec_from_file_location

        return spec_from_file_location(fullname, source, loader=SourceFileLoader(fullname, source))


def install_guard(package: str, folder: str) -> SourceGuard:
    """Put the package's guard first on `sys.meta_path` (once per package)."""
    for finder in sys.meta_path:
        if isinstance(finder, SourceGuard) and finder.package == package:
            return finder
    guard = SourceGuard(package, folder)
    sys.meta_path.insert(0, guard)
    return guard


def is_compiled(module: ModuleType) -> bool:
    """Whether `module` was loaded from a compiled extension rather than a `.py` source."""
    return (getattr(module, "__file__", None) or "").endswith(tuple(EXTENSION_SUFFIXES))


def compiled_modules(guard: SourceGuard) -> tuple[str, ...]:
    """The recorded modules that run compiled in this process (imports each of them)."""
    record = read_record(guard.folder)
    return tuple(name for name in sorted(record) if is_compiled(import_module(name)))


def describe(guard: SourceGuard) -> str:
    """One line for `--version`: what runs compiled, or why everything is pure Python."""
    compiled = compiled_modules(guard)
    if compiled:
        short = (name.removeprefix(guard.package + ".") for name in compiled)
        return "compiled with mypyc: " + ", ".join(short)
    if guard.reason:
        return f"pure Python ({guard.reason})"
    return "pure Python (nothing compiled in this install)"
