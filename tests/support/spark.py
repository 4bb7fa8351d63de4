"""Whether the Spark engine can run here: skipped with the reason when pyspark or Java is missing,
except under ``CI=true``, where a missing one fails the test instead."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def missing() -> str | None:
    """Why the Spark engine cannot run here, or None."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'extract-mlflow[spark]')"
    java_home = os.environ.get("JAVA_HOME")
    if not (java_home and Path(java_home, "bin", "java").exists()) and not shutil.which("java"):
        return "no Java runtime (install default-jre-headless or set JAVA_HOME)"
    return None


def require_spark() -> None:
    reason = missing()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: the Spark tests must run, but {reason}")
    pytest.skip(reason)
