"""The iteration folders of ``score-iterations``: one sub-folder per prompt iteration holding
its predictions (and optionally its prompt), found in natural order."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError

PRED_FILE = "pred.jsonl"


PROMPT_FILE = "prompt.txt"


# -- a folder of iterations --------------------------------------------------------------------
@dataclass(frozen=True)
class IterationInput:
    """One iteration folder: ``NN/pred.jsonl`` and, when present, ``NN/prompt.txt``."""

    name: str
    pred: Path
    prompt: Path | None


def _natural_key(name: str) -> tuple[Any, ...]:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def find_iterations(folder: str | Path) -> list[IterationInput]:
    """The iteration sub-folders of `folder` (those holding pred.jsonl), in natural order
    (2 before 10). An InputError when there are none."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"{root}: not a directory of iterations (NN/pred.jsonl + NN/prompt.txt)")
    found = []
    for sub in sorted(
        (p for p in root.iterdir() if p.is_dir()), key=lambda p: _natural_key(p.name)
    ):
        pred, prompt = sub / PRED_FILE, sub / PROMPT_FILE
        if pred.is_file():
            found.append(IterationInput(sub.name, pred, prompt if prompt.is_file() else None))
        elif prompt.exists():
            raise InputError(f"{sub}: an iteration with {PROMPT_FILE} but no {PRED_FILE}")
    if not found:
        raise InputError(f"{root}: no iteration folders with {PRED_FILE} (expected NN/{PRED_FILE})")
    return found


def read_prompt(path: Path) -> str:
    """An iteration's prompt text; an InputError when it cannot be read as UTF-8 text."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: prompt is not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read prompt: {exc.strerror or exc}") from None


def default_gold(folder: str | Path) -> Path | None:
    """``<folder>/gold.jsonl`` when it exists (the default gold of ``score-iterations``)."""
    path = Path(folder) / "gold.jsonl"
    return path if path.is_file() else None


# -- pure: choosing the best, tables, plots ----------------------------------------------------
def selection_key(rows: Sequence[Mapping[str, float]]) -> str:
    """``composite`` when any iteration has it, else ``f1``."""
    return "composite" if any("composite" in r for r in rows) else "f1"


def best_index(rows: Sequence[Mapping[str, float]]) -> int | None:
    """The index of the best iteration by composite, else F1 (earliest on ties; iterations
    without the score rank last). None for no iterations.

    >>> best_index([{"f1": 0.5}, {"f1": 0.9}, {"f1": 0.9}])
    1
    """
    if not rows:
        return None
    key = selection_key(rows)
    scores = [r.get(key, -math.inf) for r in rows]
    return max(range(len(rows)), key=lambda i: (scores[i], -i))


def running_best(values: Sequence[float | None]) -> list[float | None]:
    """The running maximum of `values` (undefined values skipped; None until one is defined).

    >>> running_best([None, 0.5, 0.4, None, 0.7])
    [None, 0.5, 0.5, 0.5, 0.7]
    """
    out: list[float | None] = []
    best: float | None = None
    for v in values:
        if v is not None and (best is None or v > best):
            best = v
        out.append(best)
    return out
