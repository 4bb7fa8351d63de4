"""The exception tree drawn in errors.py's docstring is the real one: every error class of the
package appears, nested under its base class, and each drawn error is raised somewhere."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import extract_mlflow.errors as errors
from extract_mlflow.comparison import IncomparableRunsError

PACKAGE = Path(errors.__file__).resolve().parent
BRANCH = re.compile(r"^(?P<indent>[\s│]*)(?:[├└]── )?(?P<name>[A-Z]\w+Error)\b")


def drawn_tree() -> dict[str, str | None]:
    """Error name -> the name it is drawn under (None for the root)."""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        m = BRANCH.match(line)
        if not m:
            continue
        depth = len(m.group("indent")) + (4 if "──" in line else 0)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[m.group("name")] = stack[-1][1] if stack else None
        stack.append((depth, m.group("name")))
    return parents


def package_errors() -> dict[str, type[BaseException]]:
    """Every public exception class of the package (found in the source, then imported);
    private ones (``_LineError``) never leave their module."""
    out: dict[str, type[BaseException]] = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            name = node.name if isinstance(node, ast.ClassDef) else ""
            if name.endswith("Error") and not name.startswith("_"):
                rel = path.relative_to(PACKAGE.parent).with_suffix("")
                module = importlib.import_module(".".join(rel.parts))
                out[name] = getattr(module, name)
    return out


def raised_names() -> set[str]:
    names = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                func = node.exc.func
                if isinstance(func, ast.Name):
                    names.add(func.id)
    return names


@pytest.mark.slow
def test_the_drawn_tree_is_the_class_tree() -> None:
    drawn, classes = drawn_tree(), package_errors()
    assert set(drawn) == set(classes), "draw every error class of the package in errors.py"
    for name, parent in drawn.items():
        bases = classes[name].__bases__
        want = Exception if parent is None else classes[parent]
        assert want in bases, f"{name} is drawn under {parent} but derives from {bases}"
    assert classes["IncomparableRunsError"] is IncomparableRunsError


def test_every_drawn_error_but_the_base_is_raised() -> None:
    missing = set(drawn_tree()) - {"ExtractMlflowError"} - raised_names()
    assert not missing, f"drawn but never raised: {sorted(missing)}"
