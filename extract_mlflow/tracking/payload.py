"""What an evaluation run logs, within MLflow's limits: tag and param names (user keys that
would forge ours are refused), params and tags of a report (and the signature read back from a
logged run's params), metric batches, the ``eval/`` artifacts, prompt files and the gold set as
a dataset input."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.signature import SIGNATURE_PARAMS, differences, missing_params, signature_of
from ..core.text import truncate
from ..errors import InputError
from .client import one_line, redact

if TYPE_CHECKING:
    from ..report import Report

log = logging.getLogger(__name__)


RUN_TYPE_TAG = "mlflow.runType"


RUN_TYPE_EVALUATION = "genai_evaluate"
"""The run type MLflow's own evaluations carry: the UI lists these runs as evaluation runs."""


SIGNATURE_TAG = "extract_mlflow.signature"


PARENT_RUN_TAG = "mlflow.parentRunId"


NOTE_TAG = "mlflow.note.content"


ARTIFACT_DIR = "eval"


TABLE_FILE = "eval/documents_table.json"
"""The per-document results as an MLflow table (``log_table``): the UI lines them up by run."""


GOLD_CONTEXT = "gold"


TEXT_ARTIFACTS = (".md", ".json", ".toml", ".txt", ".csv", ".tex")


# MLflow's per-call limits (mlflow.utils.validation; the tests pin them to the installed MLflow).
MAX_METRICS_PER_CALL = 1000


MAX_PARAMS_TAGS_PER_CALL = 100


MAX_ENTITIES_PER_CALL = 1000


MAX_REQUEST_BYTES = 900_000  # MLflow refuses batch requests over 1 MB; keep a margin


MAX_PARAM_LENGTH = 6000


MAX_TAG_LENGTH = 8000


MAX_KEY_LENGTH = 250


MAX_DATASET_DIGEST = 36


RESERVED_TAG_PREFIXES = ("mlflow.", "extract_mlflow.")
"""Tag namespaces this tool and MLflow write (signature, run type, note, parent run): a user tag
there could forge how a run was scored, so it is refused."""


RESERVED_PARAMS = (*SIGNATURE_PARAMS, "id_key", "pred_digest", "inferred_types")
"""The params an evaluation run sets itself (``inferred_types`` only when a type was inferred
from all of a field's gold values): a user param of the same name is refused."""


# -- pure helpers: params, tags, batches -------------------------------------------------------
def parse_key_values(items: Iterable[str], option: str = "--param") -> dict[str, str]:
    """``KEY=VALUE`` strings as a dict; an InputError naming `option` when one is malformed."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"{option} {item!r}: expected KEY=VALUE")
        out[key] = value
    return out


def check_user_keys(
    params: Mapping[str, Any] | None = None, tags: Mapping[str, Any] | None = None
) -> None:
    """An InputError naming the option when a user param or tag key is one MLflow would refuse
    (checked before any run is opened, so a typo never leaves a FAILED run behind)."""
    from mlflow.exceptions import MlflowException
    from mlflow.utils.validation import _validate_param_name, _validate_tag_name

    checks = (("--param", params, _validate_param_name), ("--tag", tags, _validate_tag_name))
    for option, keys, check in checks:
        for key in keys or {}:
            reserved = _reserved_key(option, str(key))
            if reserved:
                raise InputError(f"{option} {key!r}: {reserved}")
            if len(str(key)) > MAX_KEY_LENGTH:
                raise InputError(f"{option} {key!r}: keys are at most {MAX_KEY_LENGTH} characters")
            try:
                check(str(key))  # type: ignore[no-untyped-call]
            except MlflowException as exc:
                raise InputError(f"{option} {key!r}: {one_line(exc)}") from None


def _reserved_key(option: str, key: str) -> str | None:
    """Why a user param or tag `key` may not be given (it would forge one of ours), or None."""
    if option == "--tag" and key.strip().lower().startswith(RESERVED_TAG_PREFIXES):
        return (
            "tags starting with 'mlflow.' or 'extract_mlflow.' are set by extract-mlflow and "
            "MLflow, not by users"
        )
    if option == "--param" and key.strip() in RESERVED_PARAMS:
        return f"'{key.strip()}' is a param every evaluation run sets itself"
    return None


def fit(value: str, limit: int) -> str:
    """`value` cut to MLflow's length `limit` (with a marker), logging when it had to be cut."""
    if len(value) <= limit:
        return value
    log.warning("value of %d characters cut to MLflow's limit of %d", len(value), limit)
    return truncate(value, limit)


def report_params(report: Report, extra: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The params of an evaluation run (the signature's params: scorer version, config and input
    digests, ...; the id key, the prediction digest and the types inferred from all of a field's
    gold values as compact JSON) plus the user's (ours win on a clash),
    all within MLflow's limits. Params never change once logged, so the signature a run was
    scored with is read back from them (:func:`~extract_mlflow.core.signature.signature_of`)."""
    params = {str(k): str(v) for k, v in (extra or {}).items()}
    params.update(report.signature_params(), id_key=report.config.id_key)
    if report.pred_digest:
        params["pred_digest"] = report.pred_digest
    if report.inferred_types:
        params["inferred_types"] = json.dumps(
            report.inferred_types, ensure_ascii=False, separators=(",", ":")
        )
    return {k: fit(redact(v), MAX_PARAM_LENGTH) for k, v in params.items()}


def headline(report: Report) -> str:
    """One line for people: F1, precision, recall and the number of documents."""
    from ..core.text import fmt

    m = report.micro
    return (
        f"F1 {fmt(m.f1)} (precision {fmt(m.precision)}, recall {fmt(m.recall)}) "
        f"on {len(report.documents)} documents"
    )


def table_note(report: Report) -> str:
    """What the run's documents table holds when it does not hold every document."""
    from ..views.frames import TABLE_ROWS

    n = len(report.documents)
    if n <= TABLE_ROWS:
        return ""
    return (
        f"\n\nThe documents table ({TABLE_FILE}) lists {TABLE_ROWS:,} of the {n:,} documents:"
        f" the {TABLE_ROWS // 2:,} with the lowest F1 and {TABLE_ROWS - TABLE_ROWS // 2:,} drawn"
        f" at random (seed 0); {ARTIFACT_DIR}/documents.parquet has every document."
    )


def report_tags(
    report: Report, extra: Mapping[str, Any] | None = None, *, note: bool = True
) -> dict[str, str]:
    """The user's tags, then the signature tag, the evaluation run type and a short run
    description (ours win: a user tag never replaces them)."""
    tags = {str(k): str(v) for k, v in (extra or {}).items()}
    tags.update({SIGNATURE_TAG: report.signature(), RUN_TYPE_TAG: RUN_TYPE_EVALUATION})
    if note:
        tags[NOTE_TAG] = (
            f"extract_mlflow evaluation: {headline(report)}.{table_note(report)}"
            f"\n\n`{report.signature()}`"
        )
    return {k: fit(redact(v), MAX_TAG_LENGTH) for k, v in tags.items()}


def logged_signature(
    params: Mapping[str, str], tags: Mapping[str, str], label: str
) -> tuple[str | None, str | None]:
    """The signature a logged run (shown as `label`) was scored with, recomputed from its
    `params` (which never change once logged), and why it cannot be trusted: a required param
    missing, or the ``extract_mlflow.signature`` tag (which anyone may set) missing or saying
    otherwise. The signature is None when the params cannot give it."""
    missing = missing_params(params)
    if missing:
        return None, (
            f"{label} has no {', '.join(missing)} param: cannot tell how it was scored (not an "
            "extract_mlflow evaluation run)"
        )
    signature, tag = signature_of(params), tags.get(SIGNATURE_TAG)
    if tag is None:
        return signature, f"{label} has no {SIGNATURE_TAG} tag (its params say {signature})"
    if tag != signature:
        diff = "; ".join(differences(tag, signature))
        return signature, (
            f"the {SIGNATURE_TAG} tag of {label} does not match its params (tag vs params: {diff})"
        )
    return signature, None


@dataclass
class Batch:
    """One ``log_batch`` call's worth of metrics, params and tags, within MLflow's limits."""

    metrics: list[Any] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)
    tags: list[Any] = field(default_factory=list)
    size: int = 0

    def __len__(self) -> int:
        return len(self.metrics) + len(self.params) + len(self.tags)

    def accepts(self, kind: str, nbytes: int) -> bool:
        if len(self) >= MAX_ENTITIES_PER_CALL or self.size + nbytes > MAX_REQUEST_BYTES:
            return False
        if kind == "metrics":
            return len(self.metrics) < MAX_METRICS_PER_CALL
        return len(getattr(self, kind)) < MAX_PARAMS_TAGS_PER_CALL


def _entity_bytes(entity: Any) -> int:
    return len(str(entity.key)) + len(str(entity.value)) + 64


def plan_batches(
    metrics: Sequence[Any] = (), params: Sequence[Any] = (), tags: Sequence[Any] = ()
) -> list[Batch]:
    """Pack entities (anything with ``key`` and ``value``) into as few batches as MLflow's
    per-call limits allow: 1000 entities, 1000 metrics, 100 params, 100 tags, < 1 MB.

    >>> from types import SimpleNamespace as E
    >>> [len(b) for b in plan_batches([E(key=f"m{i}", value=1.0) for i in range(1500)])]
    [1000, 500]
    """
    batches = [Batch()]
    for kind, items in (("params", params), ("tags", tags), ("metrics", metrics)):
        for entity in items:
            nbytes = _entity_bytes(entity)
            target = next((b for b in batches if b.accepts(kind, nbytes)), None)
            if target is None:
                target = Batch()
                batches.append(target)
            getattr(target, kind).append(entity)
            target.size += nbytes
    return [b for b in batches if len(b)]


# -- artifacts (written to a temporary folder before the run opens) ----------------------------
def prompt_file_names(prompts: Sequence[str | Path]) -> list[tuple[Path, str]]:
    """(source, artifact name) for each prompt file; clashing names get ``-2``, ``-3``…"""
    out: list[tuple[Path, str]] = []
    used: set[str] = set()
    for p in prompts:
        path = Path(p)
        name, n = path.name, 1
        while name in used:
            n += 1
            name = f"{path.stem}-{n}{path.suffix}"
        used.add(name)
        out.append((path, name))
    return out


def write_counts(report: Report, path: Path) -> None:
    """The counts frame as parquet, written a block of documents at a time (one row group
    each, never the whole frame in memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..evaluation.records import counts_blocks

    writer: pq.ParquetWriter | None = None
    try:
        for block in counts_blocks(report):
            table = pa.Table.from_pandas(block, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table.cast(writer.schema))
    finally:
        if writer is not None:
            writer.close()


def write_eval_artifacts(report: Report, folder: Path, prompts: Sequence[str | Path] = ()) -> Path:
    """Write ``summary.md``, ``diagnostics.json``, ``documents.parquet``, ``config.toml`` and
    ``prompts/`` into `folder`/eval and return that directory. A missing prompt file is an
    InputError (raised before any run exists)."""
    from ..evaluation.slices import count_slices
    from ..views.markdown import report_markdown
    from ..views.plots import field_robustness_plot, robustness_plot

    out = folder / ARTIFACT_DIR
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text(report_markdown(report), encoding="utf-8")
    diagnostics = json.dumps(report.to_dict(), ensure_ascii=False, indent=2, default=str)
    (out / "diagnostics.json").write_text(diagnostics + "\n", encoding="utf-8")
    write_counts(report, out / "documents.parquet")
    (out / "config.toml").write_text(report.config.to_toml(), encoding="utf-8")
    copy_prompts(prompts, out / "prompts")
    n = 0  # a metric-vs-attribute curve per family and numeric slice attribute
    for summary in report.families.values():
        for attribute in summary.curves():
            name = "robustness.png" if n == 0 else f"robustness_{safe_name(attribute)}.png"
            robustness_plot(summary, out / name, attribute)
            n += 1
    for attribute in report.config.statistics.slice_by:  # field metrics by slice, with intervals
        slices = count_slices(report.documents, attribute, report.config.statistics)
        if slices:
            name = f"field_robustness_{safe_name(attribute)}.png"
            field_robustness_plot(slices, attribute, out / name)
    redact_files(out)
    return out


def redact_files(folder: Path) -> None:
    """Apply :func:`redact` to the text artifacts under `folder` (only rewritten when a
    credential actually occurs in them)."""
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in TEXT_ARTIFACTS:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        clean = redact(text)
        if clean != text:
            path.write_text(clean, encoding="utf-8")


def safe_name(text: str) -> str:
    """A file-name-safe version of `text`."""
    return re.sub(r"[^\w.-]+", "_", text).strip("_") or "attribute"


def copy_prompts(prompts: Sequence[str | Path], dest: Path) -> None:
    for src, name in prompt_file_names(prompts):
        if not src.is_file():
            raise InputError(f"{src}: prompt file not found")
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest / name)


def gold_dataset_input(report: Report) -> Any:
    """The gold set as an MLflow dataset input (name, digest, source, field schema, size)."""
    from mlflow.entities import Dataset, DatasetInput, InputTag
    from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

    source = report.gold_source
    is_file = source not in ("", "<rows>")
    digest = report.gold_digest or hashlib.sha256(source.encode()).hexdigest()
    schema = [{"type": "string", "name": path, "required": False} for path in report.fields]
    profile = {"num_rows": len(report.documents), "num_fields": len(report.fields)}
    dataset = Dataset(
        name=Path(source).name if is_file else "gold",
        digest=digest[:MAX_DATASET_DIGEST],
        source_type="local" if is_file else "code",
        source=json.dumps({"uri": str(Path(source).resolve())} if is_file else {"tags": {}}),
        schema=json.dumps({"mlflow_colspec": schema}),
        profile=json.dumps(profile),
    )
    return DatasetInput(dataset=dataset, tags=[InputTag(MLFLOW_DATASET_CONTEXT, GOLD_CONTEXT)])


def validate_prompt_uris(uris: Iterable[str]) -> list[str]:
    """``prompts:/NAME/VERSION`` (or ``prompts:/NAME@ALIAS``) URIs; an InputError otherwise."""
    out = []
    for uri in uris:
        rest = uri[len("prompts:/") :] if uri.startswith("prompts:/") else ""
        if not rest.strip("/") or ("/" not in rest.strip("/") and "@" not in rest):
            raise InputError(f"--prompt-uri {uri!r}: expected prompts:/NAME/VERSION")
        out.append(uri)
    return out
