"""The language of the output for people, and message lookup in it.

:func:`tr` looks a message of :data:`~extract_mlflow.core.messages.MESSAGES` up in the current
language; the command line sets that language once per command (``--lang``, else the
``EXTRACT_MLFLOW_LANG`` environment variable, else the locale: :func:`resolve_language`), and a
library caller can use :func:`language`. English unless set.

>>> tr("diff.regressed", n=3)
'regressed fields (3)'
>>> with language("ko"):
...     tr("diff.regressed", n=3)
'나빠진 필드 (3)'
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

from .messages import LANGUAGES, MESSAGES

ENV_VAR = "EXTRACT_MLFLOW_LANG"
LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG")
"""Read in this order, as the C library does; a value starting with ``ko`` means Korean."""

_current: ContextVar[str] = ContextVar("extract_mlflow_language", default=LANGUAGES[0])


def tr(key: str, /, **values: Any) -> str:
    """Message `key` in the current language, its placeholders filled from `values`."""
    return MESSAGES[key][_current.get()].format(**values)


def current_language() -> str:
    """The language messages are shown in now (``"en"`` unless set)."""
    return _current.get()


@contextlib.contextmanager
def language(lang: str) -> Iterator[None]:
    """Show messages in `lang` inside the block (one of :data:`LANGUAGES`)."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; expected one of {', '.join(LANGUAGES)}")
    token = _current.set(lang)
    try:
        yield
    finally:
        _current.reset(token)


def resolve_language(option: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The language of a command: `option` (``--lang``) when given, else
    ``EXTRACT_MLFLOW_LANG``, else the first of ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set
    (a value starting with ``ko`` is Korean, anything else English).

    >>> resolve_language(None, {"LANG": "ko_KR.UTF-8"}), resolve_language("en", {"LANG": "ko"})
    ('ko', 'en')
    """
    env = os.environ if environ is None else environ
    for value in (option, env.get(ENV_VAR)):
        if value:
            return _known(value)
    for var in LOCALE_VARS:
        if env.get(var):
            return "ko" if env[var].lower().startswith("ko") else LANGUAGES[0]
    return LANGUAGES[0]


def _known(value: str) -> str:
    """An explicit choice: ``ko``/``ko_KR...`` is Korean, ``en...`` English; else the default."""
    lowered = value.lower()
    return "ko" if lowered.startswith("ko") else LANGUAGES[0]
