"""Build of extract-mlflow: pyproject.toml holds the metadata. A source or editable install is
pure Python and compiles nothing.

A release wheel may be compiled with mypyc (scoring about 1.5x as fast, the same results):
build it without build isolation in an environment that has mypy (the pinned version below)
and numpy, with ``EXTRACT_MLFLOW_COMPILE=1``::

    pip install "mypy==2.4.1" numpy "setuptools>=77" wheel
    EXTRACT_MLFLOW_COMPILE=1 pip wheel --no-build-isolation --no-deps -w dist .

The wheel holds the `.py` sources too; Python imports a module's compiled extension where one
sits beside its source. CI builds one and runs the golden tests against it (.ci/run).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Extension, setup

PACKAGE = "extract_mlflow"
COMPILE_ENV = "EXTRACT_MLFLOW_COMPILE"
MYPY_VERSION = "2.4.1"  # the compiled code depends on mypyc's version: a release pins it
COMPILED = (
    "core/paths.py",
    "fields/align.py",
    "fields/normalize.py",
    "fields/scorer.py",
    "fields/counts.py",
    "fields/forms.py",
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
"""The compiled modules, relative to the package folder (each must stay mypy-clean; CI runs the
golden tests against the compiled wheel).

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

BUILD_DIR = Path("build", "mypyc")
METADATA_ONLY = {"egg_info", "dist_info", "sdist"}  # commands that compile nothing

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


def _extensions() -> list[Extension]:
    """mypyc's extensions of the COMPILED modules when EXTRACT_MLFLOW_COMPILE=1 and a build
    (not only its metadata) is asked for; else none."""
    if os.environ.get(COMPILE_ENV) != "1" or METADATA_ONLY & set(sys.argv[1:]):
        return []
    import mypy.version
    from mypyc.build import mypycify

    if mypy.version.__version__ != MYPY_VERSION:
        raise SystemExit(
            f"{COMPILE_ENV}=1 needs mypy=={MYPY_VERSION}, not {mypy.version.__version__}"
        )
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    config = BUILD_DIR / "mypy.ini"
    config.write_text(MYPY_CONFIG, encoding="utf-8")
    sources = [str(Path(PACKAGE, rel)) for rel in COMPILED]
    return list(
        mypycify(
            ["--config-file", str(config), *sources],
            opt_level="3",
            group_name=f"{PACKAGE}._mypyc",
            target_dir=str(BUILD_DIR),
        )
    )


setup(ext_modules=_extensions())
