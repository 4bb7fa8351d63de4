"""Every sentence the package shows people, in English and Korean, in one catalogue.

A message has an id (``"table.legend"``) and one text per language, with :meth:`str.format`
placeholders that are the same in every language. :func:`extract_mlflow.core.language.tr`
looks a message up in the current language. JSON output never goes through the catalogue: its
keys and values are the same in every language.
"""

from __future__ import annotations

LANGUAGES = ("en", "ko")
"""The languages every message has; the first is the default."""

MESSAGES: dict[str, dict[str, str]] = {
    # -- command-line lines (after the stable ``error:`` / ``warning:`` prefixes) -----------
    "cli.gate_failed": {"en": "gate failed: {reason}", "ko": "게이트 실패: {reason}"},
    "cli.logged_run": {
        "en": "logged run {run_id} to {uri}",
        "ko": "실행 {run_id}을(를) {uri}에 기록했습니다",
    },
    "cli.logged_side": {
        "en": "logged {label} as run {run_id} to {uri}",
        "ko": "{label}을(를) 실행 {run_id}(으)로 {uri}에 기록했습니다",
    },
    "cli.results_written": {
        "en": "results written to {path}",
        "ko": "결과를 {path}에 저장했습니다",
    },
    "cli.workers_capped": {
        "en": "--workers {workers}: {cores} core(s) to run on, so at most {cores} worker "
        "processes (one per batch of documents)",
        "ko": "--workers {workers}: 사용할 수 있는 코어가 {cores}개이므로 작업 프로세스는 최대 "
        "{cores}개입니다(문서 묶음당 하나)",
    },
    "cli.interrupted": {"en": "interrupted", "ko": "중단되었습니다"},
    "cli.interrupted_by": {"en": "interrupted: {reason}", "ko": "중단되었습니다: {reason}"},
    "cli.too_deep": {
        "en": "input nested too deeply to score",
        "ko": "입력의 중첩이 너무 깊어 채점할 수 없습니다",
    },
    "cli.out_of_memory": {"en": "out of memory", "ko": "메모리가 부족합니다"},
    "cli.internal_error": {
        "en": "internal error: {kind}: {detail} (set EXTRACT_MLFLOW_DEBUG=1 for the traceback)",
        "ko": "내부 오류: {kind}: {detail} "
        "(트레이스백을 보려면 EXTRACT_MLFLOW_DEBUG=1로 설정하세요)",
    },
    "cli.cannot_write": {
        "en": "{path}: cannot write report: {reason}",
        "ko": "{path}: 보고서를 쓸 수 없습니다: {reason}",
    },
    "cli.strict": {
        "en": "--strict: {warnings}",
        "ko": "--strict: 설정 경고가 오류로 처리되었습니다: {warnings}",
    },
    "cli.regressed": {
        "en": "regressed: field_f1/{path} {before} → {after} ({delta}, tolerance {tolerance:g})",
        "ko": "퇴보: field_f1/{path} {before} → {after} ({delta}, 허용 오차 {tolerance:g})",
    },
    "cli.no_document": {
        "en": "{gold}: no document with {key} {doc_id!r}",
        "ko": "{gold}: {key}이(가) {doc_id!r}인 문서가 없습니다",
    },
    "cli.exported": {
        "en": "copied {n} files to {dest}",
        "ko": "파일 {n}개를 {dest}에 복사했습니다",
    },
    "cli.next": {"en": "next:", "ko": "다음 단계:"},
    # -- the terminal table of a report ------------------------------------------------
    "table.counts": {
        "en": "documents {documents}  parse failures {failures}  unknown ids {unknown}",
        "ko": "문서 {documents}  파싱 실패 {failures}  정답에 없는 ID {unknown}",
    },
    "table.scores": {
        "en": "precision {precision}  recall {recall}  F1 {f1}  macro F1 {macro}",
        "ko": "정밀도 {precision}  재현율 {recall}  F1 {f1}  매크로 F1 {macro}",
    },
    "table.layout": {
        "en": "  layout {layout}  composite {composite}",
        "ko": "  레이아웃 {layout}  종합 {composite}",
    },
    "table.tokens": {"en": "  tokens/doc {tokens:.0f}", "ko": "  문서당 토큰 {tokens:.0f}"},
    "table.head_field": {"en": "field", "ko": "필드"},
    "table.head_type": {"en": "type", "ko": "유형"},
    "table.head_errors": {"en": "errors", "ko": "오류"},
    "table.head_worst": {"en": "most errors (FP+FN)", "ko": "오류가 많은 문서 (FP+FN)"},
    "table.head_status": {"en": "status", "ko": "상태"},
    "table.legend": {
        "en": "TP correct, FP wrong or extra, FN gold value not found; P precision, R recall; "
        "errors: kind=count",
        "ko": "TP 정답과 일치, FP 틀리거나 불필요한 값, FN 찾지 못한 정답 값; P 정밀도, "
        "R 재현율; 오류: 종류=개수",
    },
    "table.structure": {
        "en": "structure metrics (95% bootstrap interval)",
        "ko": "구조 지표 (95% 부트스트랩 구간)",
    },
    "table.fidelity": {
        "en": "text fidelity  BLEU proxy {bleu}  groundedness {grounded}"
        "  hallucination rate {rate}  approved {approved}",
        "ko": "텍스트 충실도  BLEU 근사 {bleu}  근거율 {grounded}  환각률 {rate}  승인 {approved}",
    },
    "table.injection": {
        "en": "prompt-like text in {doc_id}: {findings}",
        "ko": "{doc_id}에 프롬프트처럼 보이는 텍스트: {findings}",
    },
    "table.injection_line": {"en": "line {line} {pattern}", "ko": "{line}행 {pattern}"},
    "status.scored": {"en": "scored", "ko": "채점됨"},
    "status.missing": {"en": "missing", "ko": "예측 없음"},
    "status.parse_failure": {"en": "parse_failure", "ko": "파싱 실패"},
    "progress.matched": {
        "en": "{doc_id}: matched {tp}/{gold} gold cells",
        "ko": "{doc_id}: 정답 셀 {gold}개 중 {tp}개 일치",
    },
    "progress.rows": {"en": "rows {pred}/{gold}", "ko": "행 {pred}/{gold}"},
    "progress.tokens": {"en": "{tokens:.0f} tokens", "ko": "토큰 {tokens:.0f}개"},
    "progress.layout": {"en": "layout {present}/{required}", "ko": "레이아웃 {present}/{required}"},
    # -- fidelity table head (terminal and markdown) -----------------------------------
    "fid.head_scored": {"en": "scored", "ko": "채점 수"},
    "fid.head_bleu": {"en": "BLEU proxy", "ko": "BLEU 근사"},
    "fid.head_bands": {"en": "E/G/S", "ko": "일치/유사/상이"},
    "fid.head_new_vocab": {"en": "new vocab", "ko": "새 어휘"},
    "fid.head_paraphrase": {"en": "paraphrase", "ko": "바꿔 쓰기"},
    "fid.head_grounded": {"en": "grounded", "ko": "근거 있음"},
    "fid.head_rate": {"en": "halluc. rate", "ko": "환각률"},
    "fid.all": {"en": "(all)", "ko": "(전체)"},
    # -- notes under a report (table and markdown) -------------------------------------
    "note.warning": {"en": "warning: {message}", "ko": "경고: {message}"},
    "list.more": {"en": "… {n} more not shown", "ko": "… {n}개 더 있음 (표시하지 않음)"},
    "note.parse_failure": {
        "en": "parse failure in `{doc_id}`: {reason}",
        "ko": "`{doc_id}` 파싱 실패: {reason}",
    },
    "note.missing": {
        "en": "no prediction for {n} document(s): {ids}",
        "ko": "예측이 없는 문서 {n}개: {ids}",
    },
    "note.unknown": {
        "en": "{n} prediction(s) for ids not in gold (not scored): {ids}",
        "ko": "정답에 없는 ID의 예측 {n}개 (채점하지 않음): {ids}",
    },
    "note.unattributed": {
        "en": "prediction line without a usable id (not scored): {line}",
        "ko": "쓸 수 있는 ID가 없는 예측 줄 (채점하지 않음): {line}",
    },
    "note.skipped": {
        "en": "skipped (ignore = true): {paths}",
        "ko": "건너뜀 (ignore = true): {paths}",
    },
    "note.inferred": {
        "en": "types inferred from all gold values (no type in the config): {fields}",
        "ko": "모든 정답 값에서 추론한 유형 (설정에 type 없음): {fields}",
    },
    "note.gold_type": {
        "en": "{n} gold value(s) of `{path}` do not read as its type; compared as text",
        "ko": "`{path}`의 정답 값 {n}개를 해당 유형으로 읽을 수 없어 텍스트로 비교했습니다",
    },
    "note.layout": {
        "en": "`{doc_id}` layout {present}/{required}: {why}",
        "ko": "`{doc_id}` 레이아웃 {present}/{required}: {why}",
    },
    "note.unchecked": {
        "en": "{n} document(s) without a source (unchecked): {ids}",
        "ko": "원문이 없는 문서 {n}개 (검사하지 않음): {ids}",
    },
    "note.no_prediction": {
        "en": "{n} document(s) without a usable prediction (missing or unparseable; nothing to "
        "check): {ids}",
        "ko": "쓸 수 있는 예측이 없는 문서 {n}개 (없거나 파싱 불가; 검사할 값 없음): {ids}",
    },
    "note.empty_sources": {
        "en": "source(s) with no text: {ids}",
        "ko": "텍스트가 없는 원문: {ids}",
    },
    "note.unused_sources": {
        "en": "{n} source(s) for ids not in gold: {ids}",
        "ko": "정답에 없는 ID의 원문 {n}개: {ids}",
    },
    "note.unused_approval": {
        "en": "approval for {doc_id} `{path}` matched no checked value",
        "ko": "{doc_id} `{path}`에 대한 승인이 검사한 어떤 값과도 맞지 않습니다",
    },
    # -- summary.md of a report --------------------------------------------------------
    "md.title": {"en": "# Extraction evaluation", "ko": "# 추출 평가"},
    "md.documents": {"en": "- documents: {n}", "ko": "- 문서: {n}"},
    "md.micro": {
        "en": "- micro precision / recall / F1: {precision} / {recall} / {f1} "
        "(TP {tp}, FP {fp}, FN {fn})",
        "ko": "- 마이크로 정밀도 / 재현율 / F1: {precision} / {recall} / {f1} "
        "(TP {tp}, FP {fp}, FN {fn})",
    },
    "md.macro": {"en": "- macro F1: {value}", "ko": "- 매크로 F1: {value}"},
    "md.parse_failures": {
        "en": "- parse failures: {n} ({rate})",
        "ko": "- 파싱 실패: {n} ({rate})",
    },
    "md.signature": {"en": "- signature: `{signature}`", "ko": "- 서명: `{signature}`"},
    "md.layout_score": {
        "en": "- layout score (mean): {value}",
        "ko": "- 레이아웃 점수 (평균): {value}",
    },
    "md.composite": {
        "en": "- composite (F1 × layout): {value}",
        "ko": "- 종합 점수 (F1 × 레이아웃): {value}",
    },
    "md.tokens": {"en": "- tokens per document: {n:.0f}", "ko": "- 문서당 토큰: {n:.0f}"},
    "md.latency": {
        "en": "- latency p50 / p95: {p50:.0f} / {p95:.0f} ms",
        "ko": "- 지연 시간 p50 / p95: {p50:.0f} / {p95:.0f} ms",
    },
    "md.pages": {"en": "## Pages", "ko": "## 페이지"},
    "md.pages_head": {
        "en": "| document | layout | missing sections | rows (pred/gold) | F1 | composite |",
        "ko": "| 문서 | 레이아웃 | 빠진 섹션 | 행 (예측/정답) | F1 | 종합 |",
    },
    "md.recall_by_field": {
        "en": "Recall by field, worst first: {fields}",
        "ko": "필드별 재현율 (낮은 순): {fields}",
    },
    "md.fields": {"en": "## Fields (worst first)", "ko": "## 필드 (낮은 순)"},
    "md.fields_head": {
        "en": "| field | type | TP | FP | FN | precision | recall | F1 | errors |",
        "ko": "| 필드 | 유형 | TP | FP | FN | 정밀도 | 재현율 | F1 | 오류 |",
    },
    "md.examples": {"en": "## Mismatch examples", "ko": "## 불일치 예시"},
    "md.examples_head": {
        "en": "| field | document | error | expected | got |",
        "ko": "| 필드 | 문서 | 오류 | 정답 | 예측 |",
    },
    "md.worst": {"en": "## Documents with the most errors", "ko": "## 오류가 많은 문서"},
    "md.worst_head": {
        "en": "| document | status | FP | FN | F1 |",
        "ko": "| 문서 | 상태 | FP | FN | F1 |",
    },
    "md.notes": {"en": "## Notes", "ko": "## 참고"},
    "md.fidelity": {"en": "## Text fidelity", "ko": "## 텍스트 충실도"},
    "md.fid_values": {
        "en": "- values n-gram scored: {values} ({empty} empty); grounding checked: {checked}",
        "ko": "- n-gram 채점한 값: {values} (빈 값 {empty}); 근거 검사: {checked}",
    },
    "md.fid_bleu": {
        "en": "- BLEU proxy (mean over values): {bleu}; pooled p1..p4: {precisions}",
        "ko": "- BLEU 근사 (값 평균): {bleu}; 합산 p1..p4: {precisions}",
    },
    "md.fid_bands": {"en": "- bands: {bands}", "ko": "- 구간: {bands}"},
    "md.fid_flags": {"en": "- flags: {flags}", "ko": "- 표시: {flags}"},
    "md.fid_grounded": {
        "en": "- groundedness: {grounded} ({n}/{checked}); hallucination rate: {rate}",
        "ko": "- 근거율: {grounded} ({n}/{checked}); 환각률: {rate}",
    },
    "md.fid_approved": {"en": "- approved by a reviewer: {n}", "ko": "- 검토자가 승인: {n}"},
    "md.fid_all": {"en": "**all**", "ko": "**전체**"},
    "md.fid_worst": {"en": "### Values to review (worst first)", "ko": "### 검토할 값 (낮은 순)"},
    "md.fid_worst_head": {
        "en": "| document | field | value | BLEU | band | flags | grounded | source span (score)"
        " | extra n-grams | missing n-grams |",
        "ko": "| 문서 | 필드 | 값 | BLEU | 구간 | 표시 | 근거 | 원문 구간 (점수)"
        " | 추가 n-gram | 누락 n-gram |",
    },
    "md.yes": {"en": "yes", "ko": "예"},
    "md.no": {"en": "**no**", "ko": "**아니요**"},
    "md.fid_approved_title": {
        "en": "### Approved by a reviewer (flags cleared, scores kept)",
        "ko": "### 검토자가 승인한 값 (표시 해제, 점수 유지)",
    },
    "md.fid_approved_head": {
        "en": "| document | field | value | BLEU | cleared flags | grounded | note |",
        "ko": "| 문서 | 필드 | 값 | BLEU | 해제된 표시 | 근거 | 메모 |",
    },
    "md.injection": {
        "en": "### Prompt-like text in source documents",
        "ko": "### 원문 안의 프롬프트처럼 보이는 텍스트",
    },
    "md.injection_head": {
        "en": "| document | line | pattern | text |",
        "ko": "| 문서 | 행 | 패턴 | 텍스트 |",
    },
    "canaries": {
        "en": "prompt-injection canaries obeyed in {obeyed} of {documents} documents "
        "({rate}){which}",
        "ko": "주입 카나리아: 심긴 문서 {documents}개 중 {obeyed}개가 따름 ({rate}){which}",
    },
    "md.fid_notes": {"en": "### Fidelity notes", "ko": "### 충실도 참고"},
    "md.structure": {"en": "## Document structure", "ko": "## 문서 구조"},
    "md.no_structure": {
        "en": "No structure fields in the gold set.",
        "ko": "정답 세트에 구조 필드가 없습니다.",
    },
    "md.structure_head": {
        "en": "| metric | value | 95% CI | documents |",
        "ko": "| 지표 | 값 | 95% 신뢰구간 | 문서 |",
    },
    "md.degenerate": {"en": " (degenerate)", "ko": " (퇴화)"},
    "md.by": {"en": "### By {attribute} (95% CI)", "ko": "### {attribute}별 (95% 신뢰구간)"},
    "md.documents_col": {"en": "documents", "ko": "문서"},
    "md.structure_notes": {"en": "Notes:", "ko": "참고:"},
    # -- a diff of two prediction files ------------------------------------------------
    "diff.title": {"en": "diff A → B", "ko": "비교 A → B"},
    "diff.side": {"en": "{name}: {label}", "ko": "{name}: {label}"},
    "diff.headline": {
        "en": "{name} {before} → {after} ({delta}{interval})",
        "ko": "{name} {before} → {after} ({delta}{interval})",
    },
    "diff.interval": {
        "en": ", {confidence:.0%} CI [{low:+.3f}, {high:+.3f}]",
        "ko": ", {confidence:.0%} 신뢰구간 [{low:+.3f}, {high:+.3f}]",
    },
    "diff.paired": {
        "en": "{paired} paired documents, {resamples} resamples (seed {seed})",
        "ko": "짝지은 문서 {paired}개, 재표본 {resamples}회 (시드 {seed})",
    },
    "diff.tolerance": {"en": "tolerance {tolerance:g}", "ko": "허용 오차 {tolerance:g}"},
    "diff.micro": {"en": "micro F1", "ko": "마이크로 F1"},
    "diff.macro": {"en": "macro F1", "ko": "매크로 F1"},
    "diff.head_delta": {"en": "delta", "ko": "변화"},
    "diff.head_ci": {"en": "{confidence:.0%} CI", "ko": "{confidence:.0%} 신뢰구간"},
    "diff.regressed": {"en": "regressed fields ({n})", "ko": "나빠진 필드 ({n})"},
    "diff.improved": {"en": "improved fields ({n})", "ko": "좋아진 필드 ({n})"},
    "diff.fixed": {"en": "not → fully correct ({n})", "ko": "오답 → 완전 정답 ({n})"},
    "diff.broke": {"en": "fully correct → not ({n})", "ko": "완전 정답 → 오답 ({n})"},
    "diff.none": {"en": "-", "ko": "없음"},
    "diff.note": {"en": "note: {note}", "ko": "참고: {note}"},
    "diff.md_title": {"en": "## extract_mlflow diff: A → B", "ko": "## extract_mlflow 비교: A → B"},
    "diff.md_fields": {
        "en": "### Field F1 (largest drop first)",
        "ko": "### 필드 F1 (가장 많이 떨어진 순)",
    },
    "diff.md_documents": {"en": "### Documents that flipped", "ko": "### 결과가 뒤바뀐 문서"},
    "diff.md_notes": {"en": "### Notes", "ko": "### 참고"},
    # -- a comparison of two runs (compare, promote) -----------------------------------
    "cmp.not_gated": {
        "en": "NOT GATED: no gate was evaluated",
        "ko": "게이트 미적용: 평가된 게이트가 없습니다",
    },
    "cmp.not_gated_checks": {"en": "NOT GATED: {checks}", "ko": "게이트 미적용: {checks}"},
    "cmp.failed": {"en": "FAILED: {checks}", "ko": "실패: {checks}"},
    "cmp.passed": {"en": "PASSED: {checks}", "ko": "통과: {checks}"},
    "cmp.checks_checked": {"en": "{n} checked", "ko": "검사 {n}개"},
    "cmp.checks_failed": {"en": "{n} failed", "ko": "실패 {n}개"},
    "cmp.checks_skipped": {"en": "{n} skipped: {reasons}", "ko": "건너뜀 {n}개: {reasons}"},
    "cmp.baseline": {"en": "baseline", "ko": "기준"},
    "cmp.no_baseline": {"en": "no baseline", "ko": "기준 없음"},
    "cmp.candidate": {"en": "candidate", "ko": "후보"},
    "cmp.paired": {
        "en": "; {paired} paired documents, {resamples} resamples (seed {seed})",
        "ko": "; 짝지은 문서 {paired}개, 재표본 {resamples}회 (시드 {seed})",
    },
    "cmp.failing_gates": {"en": "### Failing gates", "ko": "### 실패한 게이트"},
    "cmp.skipped_checks": {"en": "### Skipped checks", "ko": "### 건너뛴 검사"},
    "cmp.metrics": {"en": "### Metrics", "ko": "### 지표"},
    "cmp.md_head": {
        "en": "| metric | baseline | candidate | Δ | {confidence:.0%} CI of Δ | p |",
        "ko": "| 지표 | 기준 | 후보 | Δ | Δ의 {confidence:.0%} 신뢰구간 | p |",
    },
    "cmp.md_field_head": {
        "en": "| field | baseline | candidate | Δ | {confidence:.0%} CI of Δ | p |",
        "ko": "| 필드 | 기준 | 후보 | Δ | Δ의 {confidence:.0%} 신뢰구간 | p |",
    },
    "cmp.method": {
        "en": "Δ = candidate − baseline; {confidence:.0%} percentile interval and two-sided "
        "p-value from {resamples} paired resamples of the documents (seed {seed}).",
        "ko": "Δ = 후보 − 기준; 문서를 짝지어 {resamples}회 재표본한 {confidence:.0%} 백분위 "
        "구간과 양측 p-값 (시드 {seed}).",
    },
    "cmp.field_f1": {"en": "### Field F1 (worst change first)", "ko": "### 필드 F1 (나쁜 변화 순)"},
    "cmp.documents": {"en": "### Documents", "ko": "### 문서"},
    "cmp.md_broke": {
        "en": "- fully correct → not ({n}): {ids}",
        "ko": "- 완전 정답 → 오답 ({n}): {ids}",
    },
    "cmp.md_fixed": {
        "en": "- not → fully correct ({n}): {ids}",
        "ko": "- 오답 → 완전 정답 ({n}): {ids}",
    },
    "cmp.md_regressed_head": {
        "en": "| most regressed document | F1 | errors (FP+FN) | status |",
        "ko": "| 가장 나빠진 문서 | F1 | 오류 (FP+FN) | 상태 |",
    },
    "cmp.gate_failed": {"en": "  gate failed: {reason}", "ko": "  게이트 실패: {reason}"},
    "cmp.skipped": {"en": "  skipped: {metric}: {reason}", "ko": "  건너뜀: {metric}: {reason}"},
    "cmp.head_metric": {"en": "metric", "ko": "지표"},
    "cmp.head_delta": {"en": "delta", "ko": "변화"},
    "cmp.broke": {"en": "fully correct → not ({n}): {ids}", "ko": "완전 정답 → 오답 ({n}): {ids}"},
    "cmp.fixed": {"en": "not → fully correct ({n}): {ids}", "ko": "오답 → 완전 정답 ({n}): {ids}"},
    "cmp.regressed": {
        "en": "regressed {doc_id}: F1 {before} → {after}, errors {errors_before} → {errors_after}",
        "ko": "나빠진 문서 {doc_id}: F1 {before} → {after}, 오류 {errors_before} → {errors_after}",
    },
    "cmp.no_gate_given": {
        "en": "no gate was evaluated: no gate was given (--gates, --min, --max or --max-drop)",
        "ko": "평가된 게이트가 없습니다: 게이트가 주어지지 않았습니다 "
        "(--gates, --min, --max 또는 --max-drop)",
    },
    "cmp.all_skipped": {
        "en": "no gate was evaluated: every check was skipped ({reasons})",
        "ko": "평가된 게이트가 없습니다: 모든 검사를 건너뛰었습니다 ({reasons})",
    },
    # -- promote ----------------------------------------------------------------------
    "promote.kept": {
        "en": "{uri} passed and keeps @{alias}",
        "ko": "{uri}이(가) 통과하여 @{alias}을(를) 유지합니다",
    },
    "promote.first": {
        "en": "promoted {uri} to @{alias} as its first holder (was unset): no baseline, "
        "no gate was evaluated (--allow-first)",
        "ko": "{uri}을(를) @{alias}의 첫 보유자로 승격했습니다 (이전에 없음): 기준이 없어 "
        "평가된 게이트가 없습니다 (--allow-first)",
    },
    "promote.promoted": {
        "en": "promoted {uri} to @{alias} (was {was})",
        "ko": "{uri}을(를) @{alias}(으)로 승격했습니다 (이전: {was})",
    },
    "promote.version": {"en": "version {version}", "ko": "버전 {version}"},
    "promote.unset": {"en": "unset", "ko": "없음"},
    "promote.stays": {"en": "stays on version {version}", "ko": "버전 {version}에 그대로 있습니다"},
    "promote.stays_unset": {"en": "stays unset", "ko": "계속 비어 있습니다"},
    "promote.superseded": {
        "en": "superseded: {uri} was gated against @{alias} = {was}, but another promotion "
        "moved @{alias} meanwhile and {uri} does not pass against it; @{alias} {stays}",
        "ko": "대체됨: {uri}은(는) @{alias} = {was} 기준으로 게이트를 통과했지만, 그 사이 다른 "
        "승격이 @{alias}을(를) 옮겼고 {uri}은(는) 새 기준을 통과하지 못합니다; @{alias}은(는) "
        "{stays}",
    },
    "promote.failed": {
        "en": "not promoted: {uri} failed its gates; @{alias} {stays}",
        "ko": "승격 안 됨: {uri}이(가) 게이트를 통과하지 못했습니다; @{alias}은(는) {stays}",
    },
    # -- score-iterations, hints, demo -------------------------------------------------
    "loop.iteration": {"en": "iteration", "ko": "반복"},
    "loop.best_f1": {"en": "best F1", "ko": "최고 F1"},
    "loop.precision": {"en": "Precision", "ko": "정밀도"},
    "loop.recall": {"en": "Recall", "ko": "재현율"},
    "loop.composite": {"en": "Composite", "ko": "종합"},
    "loop.tokens": {"en": "Tokens/doc", "ko": "문서당 토큰"},
    "loop.run_id": {"en": "run id", "ko": "실행 ID"},
    "loop.best": {"en": "best", "ko": "최고"},
    "loop.reference": {"en": "reference", "ko": "기준"},
    "hints.title": {
        "en": "Example values from other documents (formats, not answers):",
        "ko": "다른 문서의 예시 값 (정답이 아니라 형식 참고용):",
    },
    "hints.withheld": {
        "en": "withheld {n} value(s) equal to {doc_id}'s own gold: {fields}",
        "ko": "{doc_id}의 정답과 같아 뺀 값 {n}개: {fields}",
    },
    "demo.logged": {
        "en": "extract-mlflow demo: logged to {uri}{where}",
        "ko": "extract-mlflow demo: {uri}{where}에 기록했습니다",
    },
    "demo.experiment": {"en": " (experiment {name})", "ko": " (실험 {name})"},
    "demo.head": {
        "en": "run|F1|precision|recall|model version|run id",
        "ko": "실행|F1|정밀도|재현율|모델 버전|실행 ID",
    },
    "demo.delta": {
        "en": "F1 {before:.3f} -> {after:.3f} ({delta:+.3f}) with the improved prompt",
        "ko": "개선된 프롬프트로 F1 {before:.3f} -> {after:.3f} ({delta:+.3f})",
    },
    "demo.open_ui": {"en": "Open the MLflow UI: {command}", "ko": "MLflow UI 열기: {command}"},
    # -- the comparison page ------------------------------------------------------------
    "page.diff_title": {"en": "extract_mlflow diff", "ko": "extract_mlflow 비교 (diff)"},
    "page.compare_title": {"en": "extract_mlflow compare", "ko": "extract_mlflow 실행 비교"},
    "page.gold": {"en": "gold", "ko": "정답"},
    "page.overview": {"en": "Overview", "ko": "개요"},
    "page.fields": {"en": "Field F1", "ko": "필드 F1"},
    "page.fields_hint": {
        "en": "Click a column header to sort; the page opens sorted by Δ, largest drop first.",
        "ko": "열 제목을 누르면 정렬됩니다. 처음에는 Δ 기준, 가장 많이 떨어진 순으로 보입니다.",
    },
    "page.flips": {"en": "Documents that flipped", "ko": "결과가 뒤바뀐 문서"},
    "page.fixed": {"en": "not → fully correct", "ko": "오답 → 완전 정답"},
    "page.broke": {"en": "fully correct → not", "ko": "완전 정답 → 오답"},
    "page.side_by_side": {"en": "Flipped documents side by side", "ko": "뒤바뀐 문서 나란히 보기"},
    "page.side_hint": {
        "en": "Highlighted: leaves the scorer marked wrong; marked values are the wrong ones.",
        "ko": "강조 표시: 채점기가 틀렸다고 표시한 항목이며, 표시된 값이 틀린 값입니다.",
    },
    "page.regressed_docs": {"en": "Most regressed documents", "ko": "가장 나빠진 문서"},
    "page.notes": {"en": "Notes", "ko": "참고"},
    "page.history": {"en": "Comparisons of this run", "ko": "이 실행의 비교 기록"},
    "page.kept_as": {"en": "Kept on the candidate's run as {path}.", "ko": "{path}에 보관됨."},
    "page.no_earlier": {"en": "No earlier comparison.", "ko": "이전 비교가 없습니다."},
    "page.earlier": {"en": "Earlier comparisons ({n}), newest first:", "ko": "이전 비교 {n}개:"},
    "page.no_line": {
        "en": "no prediction line, or an unreadable one",
        "ko": "예측 줄이 없거나 읽을 수 없습니다",
    },
    "page.paired": {
        "en": "{paired} paired documents, {resamples} resamples (seed {seed}), "
        "{confidence:.0%} intervals",
        "ko": "짝지은 문서 {paired}개, 재표본 {resamples}회 (시드 {seed}), {confidence:.0%} 구간",
    },
    "page.head_metric": {"en": "metric", "ko": "지표"},
    "page.head_bar": {"en": "bar", "ko": "막대"},
    "page.head_leaf": {"en": "leaf", "ko": "항목"},
    "page.head_document": {"en": "document", "ko": "문서"},
    "page.head_errors": {"en": "errors (FP+FN)", "ko": "오류 (FP+FN)"},
    "page.changed": {"en": "changed fields: {fields}", "ko": "바뀐 필드: {fields}"},
    "page.status": {"en": "status {before} → {after}", "ko": "상태 {before} → {after}"},
}
"""Message id -> language -> text (``str.format`` placeholders, the same in every language)."""
