"""Wiki/markdown pages: sections, ```csv blocks, the layout score of a page against a
profile (which sections it must have, how long the prose must be, where the table goes), and
what of a page or profiled document is field-scored (:func:`prepare_document`: its table rows).

A heading is a wiki heading (``== X ==``), a markdown heading (``## X``), or a line that is a
known section title alone (case-insensitive, optional trailing colon, optional ``**bold**`` and
leading numbering such as ``3.``). Headings inside fenced code blocks are not headings.

layout_score = required sections present / required sections, where a prose section is present
when it has at least ``min_words`` words and the table section when it holds a ```csv block with
a header and at least one data row.

>>> page = parse_page("== Catalyst ==\\nTiO2 nanoparticles\\n", titles=["Catalyst"])
>>> [s.title for s in page.sections]
['Catalyst']
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .config import Config, LayoutProfile

_WIKI = re.compile(r"^\s*(={1,6})\s*(.+?)\s*\1\s*$")
_MARKDOWN = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)")
_NUMBERING = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.)\s+")
_WORD = re.compile(r"\w+")


def title_key(text: str) -> str:
    """How titles are compared: markup, numbering, a trailing colon, case and spacing ignored."""
    s = text.strip().strip("*_").strip()
    s = _NUMBERING.sub("", s)
    s = s.rstrip(":").strip().strip("*_").strip()
    return " ".join(s.split()).casefold()


@dataclass
class CsvBlock:
    """A fenced ```csv block read with a real CSV parser."""

    header: list[str]
    rows: list[dict[str, Any]]
    problems: list[str] = field(default_factory=list)
    line: int = 0  # 1-based line of the opening fence on the page

    @property
    def usable(self) -> bool:
        """A header and at least one data row."""
        return bool(self.header) and bool(self.rows)


@dataclass
class Section:
    """A heading and the text under it (up to the next heading of any level)."""

    title: str
    level: int
    line: int
    text: str = ""
    csv_blocks: list[CsvBlock] = field(default_factory=list)

    @property
    def words(self) -> int:
        """Words of prose (code blocks not counted)."""
        return len(_WORD.findall(self.text))


@dataclass
class Page:
    """A parsed page: the sections in order, and every CSV block (also those outside sections)."""

    sections: list[Section]
    csv_blocks: list[CsvBlock]

    def section(self, title: str) -> Section | None:
        """The first section with this title (compared by :func:`title_key`)."""
        key = title_key(title)
        return next((s for s in self.sections if title_key(s.title) == key), None)


def _heading(line: str, known: set[str]) -> tuple[int, str] | None:
    m = _WIKI.match(line)
    if m:
        return len(m.group(1)), m.group(2).strip()
    m = _MARKDOWN.match(line)
    if m:
        return len(m.group(1)), m.group(2).strip()
    if known and line.strip() and title_key(line) in known:
        return 0, line.strip().strip("*_").rstrip(":").strip().strip("*_").strip()
    return None


def parse_page(text: str, titles: Iterable[str] = ()) -> Page:
    """Split a page into sections and read its ```csv blocks. `titles` are the section titles
    that also count as headings when they stand alone on a line."""
    known = {title_key(t) for t in titles}
    sections: list[Section] = []
    blocks: list[CsvBlock] = []
    current: Section | None = None
    prose: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            end = _closing_fence(lines, i + 1, fence.group(1))
            if fence.group(2).casefold() == "csv":
                block = read_csv_block("\n".join(lines[i + 1 : end]), line=i + 1)
                blocks.append(block)
                if current is not None:
                    current.csv_blocks.append(block)
            i = end + 1
            continue
        heading = _heading(line, known)
        if heading is not None:
            _close(current, prose)
            current, prose = Section(heading[1], heading[0], i + 1), []
            sections.append(current)
        else:
            prose.append(line)
        i += 1
    _close(current, prose)
    return Page(sections, blocks)


def _closing_fence(lines: list[str], start: int, fence: str) -> int:
    for j in range(start, len(lines)):
        if lines[j].strip().startswith(fence[0] * len(fence)) and not lines[j].strip().strip(
            fence[0]
        ):
            return j
    return len(lines)  # an unclosed fence runs to the end of the page


def _close(section: Section | None, prose: list[str]) -> None:
    if section is not None:
        section.text = "\n".join(prose).strip()


def read_csv_block(text: str, line: int = 0) -> CsvBlock:
    """Header + rows of a CSV block; quoted fields work; ragged rows are reported, not dropped
    silently (missing cells are absent, extra cells are reported and left out)."""
    records = [
        r for r in csv.reader(io.StringIO(text), skipinitialspace=True) if any(c.strip() for c in r)
    ]
    if not records:
        return CsvBlock([], [], ["empty csv block"], line)
    header = _header([c.strip() for c in records[0]])
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    for n, record in enumerate(records[1:], start=2):
        cells = [c.strip() for c in record]
        if len(cells) != len(header):
            problems.append(f"csv row {n} has {len(cells)} cells, the header has {len(header)}")
        rows.append(
            {h: (cells[k] if k < len(cells) and cells[k] else None) for k, h in enumerate(header)}
        )
    if not rows:
        problems.append("csv block has a header but no data row")
    return CsvBlock(header, rows, problems, line)


def _header(cells: list[str]) -> list[str]:
    out: list[str] = []
    for k, name in enumerate(cells, start=1):
        base = name or f"column_{k}"
        unique, n = base, 2
        while unique in out:
            unique, n = f"{base}_{n}", n + 1
        out.append(unique)
    return out


@dataclass
class LayoutResult:
    """How a page meets its profile."""

    profile: str
    required: int
    present: list[str]
    missing: dict[str, str]  # title -> why ("absent", "too short: 12 < 20 words", ...)
    rows_source: str | None = None  # "table_section", "first_csv_block" or None
    problems: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return len(self.present) / self.required if self.required else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "score": self.score,
            "present": self.present,
            "missing": self.missing,
            "rows_source": self.rows_source,
            "problems": self.problems,
        }


def check_layout(page: Page | None, name: str, profile: LayoutProfile) -> LayoutResult:
    """Which required sections the page has; a missing page has none."""
    present: list[str] = []
    missing: dict[str, str] = {}
    table_key = title_key(profile.table_section) if profile.table_section else None
    for title in profile.required:
        why = _why_missing(page, title, profile, title_key(title) == table_key)
        if why is None:
            present.append(title)
        else:
            missing[title] = why
    return LayoutResult(name, len(profile.required), present, missing)


def _why_missing(
    page: Page | None, title: str, profile: LayoutProfile, is_table: bool
) -> str | None:
    section = page.section(title) if page is not None else None
    if section is None:
        return "no page" if page is None else "absent"
    if is_table:
        if not section.csv_blocks:
            return "no csv block"
        if not any(b.usable for b in section.csv_blocks):
            return "csv block has no data row"
        return None
    if section.words < profile.min_words:
        return f"too short: {section.words} < {profile.min_words} words"
    return None


def page_rows(
    page: Page, profile: LayoutProfile
) -> tuple[list[dict[str, Any]], str | None, list[str]]:
    """The data rows of the table section's first usable CSV block; on a page without that
    section, of the first usable CSV block anywhere (a CSV-only page keeps its data score and
    loses its layout score). Returns (rows, where they came from, problems)."""
    if profile.table_section:
        section = page.section(profile.table_section)
        if section is not None:
            for block in section.csv_blocks:
                if block.usable:
                    return block.rows, "table_section", block.problems
    for block in page.csv_blocks:
        if block.usable:
            return block.rows, "first_csv_block", block.problems
    return [], None, [b for blk in page.csv_blocks for b in blk.problems]


@dataclass
class Prepared:
    """What of one document is scored, and its layout when it is a page."""

    gold: dict[str, Any]
    pred: dict[str, Any] | None
    layout: LayoutResult | None = None
    rows_gold: int | None = None
    rows_pred: int | None = None


def profile_for(gold_doc: Mapping[str, Any], config: Config, override: str | None) -> str | None:
    """The layout profile of a document: `override` (``--profile``), else the gold line's topic
    when a profile has that name, else the only profile there is; None without profiles."""
    profiles = config.layout.profiles
    if override is not None:
        return override
    topic = gold_doc.get(config.layout.topic_key)
    if isinstance(topic, str) and topic in profiles:
        return topic
    return next(iter(profiles)) if len(profiles) == 1 else None


def prepare_document(
    gold_doc: dict[str, Any],
    pred_doc: dict[str, Any] | None,
    config: Config,
    profile: str | None,
    notes: list[str],
) -> Prepared:
    """A JSON prediction is scored as it is. A page (the prediction's `text_key` holds text) or
    a document with a layout profile is scored on its table rows only: the gold line's `rows`
    against the rows of the page's table section; its other gold keys are attributes."""
    name = profile_for(gold_doc, config, profile)
    text = pred_doc.get(config.text_key) if pred_doc is not None else None
    is_page = isinstance(text, str) and config.text_key not in gold_doc
    if name is None and not is_page:
        return Prepared(gold_doc, pred_doc)
    rows_key, id_key = config.layout.rows_key, config.id_key
    gold_rows = gold_doc.get(rows_key)
    gold = {id_key: gold_doc[id_key], rows_key: gold_rows}
    spec = config.layout.profiles.get(name) if name is not None else None
    if isinstance(text, str) and is_page:
        page = parse_page(text, spec.required if spec else ())
        rows, source, problems = page_rows(page, spec or _NO_PROFILE)
        pred: dict[str, Any] | None = {rows_key: rows}
    else:
        page, source, problems = None, None, []
        pred = {rows_key: pred_doc.get(rows_key)} if pred_doc is not None else None
        if pred_doc is not None:
            problems = [f"no page text under '{config.text_key}'"]
    layout = None
    if spec is not None and name is not None:
        layout = check_layout(page, name, spec)
        layout.rows_source, layout.problems = source, problems
    elif name is None:
        notes.append(f"{gold_doc[id_key]}: no layout profile (set --profile or a topic)")
    pred_rows = pred.get(rows_key) if pred is not None else None
    return Prepared(gold, pred, layout, _count(gold_rows), _count(pred_rows))


_NO_PROFILE = LayoutProfile(required=("-",))


def _count(rows: Any) -> int | None:
    return len(rows) if isinstance(rows, list) else None


# -- a run's pages --------------------------------------------------------------------------


@dataclass(eq=False)
class PageSummary:
    """The pages of a run (the documents that are pages or have a layout profile) as columns,
    rows in gold order, with the tallies the summaries read and the full :class:`LayoutResult`
    of a few pages: the listed ones (the first in gold order) and those with the most errors
    (where a report's worst documents come from). Every number about the pages is computed
    from the columns, so it does not depend on how many are listed. Built by
    :class:`~extract_mlflow.evaluation.pages.PageRecords`."""

    positions: npt.NDArray[np.int64] | range
    """the documents' positions (gold lines), sorted"""
    values: npt.NDArray[np.unsignedinteger[Any]]
    """per row: has a layout (0/1), sections present, sections required, gold rows + 1 and
    predicted rows + 1 (0: the rows are not a list)"""
    missing: dict[str, int]
    """required section -> pages that lack it"""
    problems: dict[str, int]
    """CSV problem -> how often the pages have it"""
    layouts: dict[int, LayoutResult]
    """position -> the layout of a listed page or of one with the most errors"""
    listed: list[int]
    """the positions of the listed pages, in gold order"""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PageSummary):
            return False
        mine = (self.missing, self.problems, self.layouts, self.listed)
        return (
            np.array_equal(np.asarray(self.positions), np.asarray(other.positions))
            and np.array_equal(self.values, other.values)
            and mine == (other.missing, other.problems, other.layouts, other.listed)
        )

    @property
    def count(self) -> int:
        """How many documents have a layout (listed or not)."""
        return int(np.count_nonzero(self.values[:, 0]))

    @property
    def not_listed(self) -> int:
        """How many documents with a layout are not listed."""
        return self.count - len(self.listed)

    @property
    def layout_score(self) -> float | None:
        """Mean layout score over the documents with a layout (summed in gold order)."""
        scores = _scores(self.values[self.values[:, 0] == 1]).tolist()
        return sum(scores) / len(scores) if scores else None

    @property
    def missing_sections(self) -> dict[str, int]:
        """Required section -> pages that lack it (most often missing first)."""
        return dict(sorted(self.missing.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def with_missing(self) -> int:
        """How many documents with a layout lack a required section."""
        v = self.values
        return int(np.count_nonzero((v[:, 0] == 1) & (v[:, 1] < v[:, 2])))

    @property
    def problem_count(self) -> int:
        """How many CSV problems the documents with a layout have in all."""
        return sum(self.problems.values())

    def _rows(self, at: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The row of each position in `at` (-1: not a page)."""
        p, n = self.positions, len(self.positions)
        if isinstance(p, range):
            rows = at - p.start
            return np.where((rows >= 0) & (rows < n), rows, -1)
        rows = np.searchsorted(p, at)
        found = rows < n
        found[found] = p[rows[found]] == at[found]
        return np.where(found, rows, -1)

    def scores_at(self, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """The layout score of the documents at `positions` (NaN: no layout)."""
        rows = self._rows(np.asarray(positions, dtype=np.int64))
        out = np.full(len(rows), np.nan)
        out[rows >= 0] = _scores(self.values[rows[rows >= 0]])
        return out

    def of(self, position: int) -> tuple[LayoutResult | None, int | None, int | None]:
        """The document at `position`: its layout (when kept), its gold and predicted rows."""
        p = self.positions
        row = position - p.start if isinstance(p, range) else int(np.searchsorted(p, position))
        if not 0 <= row < len(p) or p[row] != position:
            return None, None, None
        gold, pred = (int(v) for v in self.values[row, 3:5])
        return self.layouts.get(position), gold - 1 if gold else None, pred - 1 if pred else None


def _scores(values: npt.NDArray[np.unsignedinteger[Any]]) -> npt.NDArray[np.float64]:
    """The layout score of each row of :attr:`PageSummary.values`, as ``LayoutResult.score``
    gives it (NaN without a layout)."""
    present, required = values[:, 1], values[:, 2]
    out = np.zeros(len(values))
    np.divide(present, required, out=out, where=required > 0)
    out[values[:, 0] == 0] = np.nan
    return out
