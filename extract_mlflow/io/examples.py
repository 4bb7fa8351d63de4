"""The bundled invoice example: where it is, and copying it out so a user can start from it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from ..errors import InputError

EXAMPLE_FILES = ("gold.jsonl", "pred_baseline.jsonl", "pred_improved.jsonl", "config.toml")
"""what the demo needs; an export also copies README.md and sources/ when they are there"""
EXTRA_FILES = ("README.md",)
SOURCES = "sources"


def find_example_dir(example_dir: str | Path | None = None) -> Path:
    """The invoice example folder: `example_dir`, else ``examples/invoices`` next to the
    package (a source checkout or editable install), else the copy a wheel installs under
    ``<prefix>/share/extract-mlflow/``, else in the working directory."""
    candidates = (
        [Path(example_dir)]
        if example_dir is not None
        else [
            Path(__file__).resolve().parents[2] / "examples" / "invoices",
            Path(sys.prefix) / "share" / "extract-mlflow" / "examples" / "invoices",
            Path.cwd() / "examples" / "invoices",
        ]
    )
    for folder in candidates:
        if all((folder / f).is_file() for f in EXAMPLE_FILES):
            return folder
    shown = ", ".join(str(c) for c in candidates)
    raise InputError(
        f"invoice example not found (looked in {shown}); pass the folder holding "
        f"{', '.join(EXAMPLE_FILES)}"
    )


def export_example(dest: str | Path, example_dir: str | Path | None = None) -> list[Path]:
    """Copy the example (gold, both prediction files, config, README and the source texts)
    into `dest` (created if missing) and return the copied paths. Nothing is overwritten: a
    file that is already there is an InputError, raised before anything is copied."""
    src, out = find_example_dir(example_dir), Path(dest)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder")
    names = [*EXAMPLE_FILES, *(f for f in EXTRA_FILES if (src / f).is_file())]
    sources = sorted(p.name for p in (src / SOURCES).glob("*.txt"))
    targets = [out / n for n in names] + [out / SOURCES / n for n in sources]
    taken = [t for t in targets if t.exists()]
    if taken:
        raise InputError(f"{taken[0]}: already exists; export into an empty or new folder")
    copied = []
    for name in names:
        copied.append(_copy(src / name, out / name))
    for name in sources:
        copied.append(_copy(src / SOURCES / name, out / SOURCES / name))
    return copied


def _copy(src: Path, dst: Path) -> Path:
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    except OSError as exc:
        raise InputError(f"{dst}: cannot write: {exc.strerror}") from None
    return dst
