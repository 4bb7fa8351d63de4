"""Build of extract-mlflow: pyproject.toml holds the metadata; this file adds, when it can, a
mypyc-compiled build of the hot scoring modules (listed in COMPILED) and the bootstrap's C loop
(C_LOOP).

The `.py` sources always ship and stay the reference: compiled and pure Python give identical
results, and `extract_mlflow/_compiled.py` loads the sources instead of the compiled modules
when EXTRACT_MLFLOW_PURE=1 is set or when a source changed after the build (the build records
each compiled source's size, mtime and sha256 in `extract_mlflow/_compiled.txt`).

Compiling is skipped, with a warning and never a failure, when EXTRACT_MLFLOW_NO_COMPILE=1 is
set, when mypyc cannot be imported, when no working C compiler is found, or when the compile
itself fails: the package is then the pure-Python one.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
PACKAGE = "extract_mlflow"
COMPILED = (
    "core/paths.py",
    "fields/align.py",
    "fields/normalize.py",
    "fields/scorer.py",
    "evaluation/chunks.py",
    "io/lines.py",
    "io/loading.py",
    "io/stream.py",
    "evaluation/field_counts.py",
    "io/spill.py",
    "evaluation/accumulator.py",
    "evaluation/compact.py",
    "evaluation/records.py",
)
"""The compiled modules, relative to the package folder (each must stay mypy-clean and pass the
whole suite compiled).

What compiling asked, as found: io/stream.py tests its `_pred_error` through a method (mypy kept
the attribute narrowed to None across the reads that set it, and the compiled check raised
TypeError) and calls the id hash through a module global (a test makes ids collide: a compiled
module calls its own functions directly). A compiled module must not hold a subclass of dict or
list (not compiled), a generic dataclass (fails on import), a functools.cached_property (returns
the wrong thing), a subclass of an abstract class such as Sequence (it shares that class's
isinstance cache: ``isinstance([], it)`` turns true), weak references to its instances
(finalizers watch an object it holds instead), and pickling by ``__dict__`` or into a frozen
dataclass (a compiled instance has no ``__dict__`` and is rebuilt by calling its class:
``__reduce__`` gives the arguments). Such classes live in plain modules beside:
evaluation/columns.py, evaluation/inputs.py."""

C_LOOP = Extension(
    f"{PACKAGE}.evaluation._resample",
    sources=[f"{PACKAGE}/evaluation/_resample.c"],
    extra_compile_args=["-O3"],
)
"""The bootstrap's draws and sums in one C loop (numpy's stream, checked against numpy at first
use: evaluation/draws.py); built with the mypyc modules, under the same conditions."""

RECORD = "_compiled.txt"  # written next to the compiled modules; read by _compiled.py
SHARED_LIB = f"{PACKAGE}._mypyc"  # mypyc's shared library lives inside the package
NO_COMPILE_ENV = "EXTRACT_MLFLOW_NO_COMPILE"
PENDING = f"{PACKAGE}._mypyc_pending"  # stands for mypyc's extensions until build_ext runs
BUILD_DIR = Path("build", "mypyc")

# Third-party types are skipped (Any): the compiled code is then the same whether or not the
# build environment has these packages, and mypy need not read their large stubs. numpy is the
# exception: its array aliases (NDArray[...]) must resolve, so the build requires it.
_SKIPPED = (
    "click", "matplotlib", "mlflow", "orjson", "pandas", "pint", "pyarrow", "pydantic", "pypdf",
    "pyspark", "rapidfuzz", "scipy", "tomli_w",
)  # fmt: skip
MYPY_CONFIG = (
    "[mypy]\n"
    "ignore_missing_imports = True\n"
    "warn_unused_ignores = False\n"
    f"cache_dir = {BUILD_DIR / 'mypy_cache'}\n"
    + "".join(f"[mypy-{name}.*]\nfollow_imports = skip\n" for name in _SKIPPED)
)


def _warn(reason: str) -> None:
    sys.stderr.write(f"WARNING: extract-mlflow: {reason}; building the pure-Python package\n")


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def _compiler_problem() -> str | None:
    """Why no C extension can be built here (None when a compiler builds against Python.h)."""
    from distutils.ccompiler import new_compiler
    from distutils.errors import CCompilerError, DistutilsError
    from distutils.sysconfig import customize_compiler, get_python_inc

    compiler: Any = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp, "probe.c")
        probe.write_text("#include <Python.h>\nint probe(void) { return 0; }\n")
        try:
            compiler.compile([str(probe)], output_dir=tmp, include_dirs=[get_python_inc()])
        except (CCompilerError, DistutilsError, OSError) as exc:
            return f"no working C compiler ({exc})"
    return None


def _skip_reason() -> str | None:
    if _truthy(NO_COMPILE_ENV):
        return f"{NO_COMPILE_ENV} is set, nothing compiled"
    try:
        import mypyc.build  # noqa: F401
    except ImportError as exc:
        return f"mypyc is not available ({exc})"
    return _compiler_problem()


def _source_stamps() -> str:
    """The record: one line per compiled module, `module size mtime_ns sha256` of its source."""
    lines = ["# modules compiled by mypyc: module, size, mtime_ns, sha256 of the source\n"]
    for rel in COMPILED:
        path = ROOT / PACKAGE / rel
        data = path.read_bytes()
        module = ".".join((PACKAGE, *Path(rel).with_suffix("").parts))
        stat = path.stat()
        digest = hashlib.sha256(data).hexdigest()
        lines.append(f"{module} {len(data)} {stat.st_mtime_ns} {digest}\n")
    return "".join(lines)


def _remove_inplace_artifacts() -> None:
    """Drop compiled modules and their record from the source tree (an editable install's),
    so a checkout never keeps a compiled module that this build did not produce."""
    package = ROOT / PACKAGE
    (package / RECORD).unlink(missing_ok=True)
    for suffix in EXTENSION_SUFFIXES:
        for path in package.rglob(f"*{suffix}"):
            path.unlink(missing_ok=True)


def _mypyc_extensions() -> list[Extension]:
    from mypyc.build import mypycify

    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    config = BUILD_DIR / "mypy.ini"
    config.write_text(MYPY_CONFIG, encoding="utf-8")
    sources = [str(Path(PACKAGE, rel)) for rel in COMPILED]
    return list(
        mypycify(
            ["--config-file", str(config), *sources],
            opt_level="3",
            group_name=SHARED_LIB,
            target_dir=str(BUILD_DIR),
        )
    )


# Commands that finalize build_ext (to list its sources) without building: they never compile.
METADATA_COMMANDS = {"egg_info", "dist_info", "sdist", "check"}


class BuildExt(build_ext):
    """build_ext that turns the PENDING placeholder into mypyc's extensions (not for metadata
    and source distributions) and falls back to pure Python when the compile fails."""

    _record = ""

    def finalize_options(self) -> None:
        pending = [ext for ext in self.distribution.ext_modules or [] if ext.name == PENDING]
        if pending:
            extensions: list[Extension] = []
            if not set(self.distribution.commands) <= METADATA_COMMANDS:
                self._record = _source_stamps()  # before compiling: an edit during the build
                try:  # makes the record differ from the source, so the module loads pure
                    extensions = _mypyc_extensions()
                except (Exception, SystemExit) as exc:  # mypyc reports type errors by exiting
                    _warn(f"mypyc failed ({exc})")
                if sys.platform != "win32":  # it needs a 128-bit integer type (gcc, clang)
                    extensions.append(C_LOOP)
            self.distribution.ext_modules = extensions
        super().finalize_options()

    def run(self) -> None:
        inplace = self.inplace or self.editable_mode
        if inplace:
            _remove_inplace_artifacts()
        try:
            super().run()
        except Exception as exc:
            _warn(f"compiling the mypyc modules failed ({exc})")
            for output in self.get_outputs():
                Path(output).unlink(missing_ok=True)
            if inplace:
                _remove_inplace_artifacts()
            self.extensions = []
            return
        if self.extensions and self._record:
            folder = ROOT / PACKAGE if inplace else Path(self.build_lib, PACKAGE)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / RECORD).write_text(self._record, encoding="utf-8")


def _extensions() -> list[Extension]:
    reason = _skip_reason()
    if reason is None:
        return [Extension(PENDING, sources=[])]
    _warn(reason)
    if "editable_wheel" in sys.argv:
        _remove_inplace_artifacts()
    return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
