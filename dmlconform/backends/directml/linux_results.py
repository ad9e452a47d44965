"""The docs/results page of a directml run over the Linux CPU stack (issue #25).

`dmlconform results` renders the rows where a backend computed cases; on this
stack most cases never reach a kernel, so this page says for every operator
and data type whether it ran and, where not, why (the reason classes below,
with counts), and gives every FAIL its analysis from a notes file (the
format of docs/results/notes.yaml: ``match`` a glob on the case id, ``class``
bug / doc / harness / mapping, ``note``).  Pure functions over a run's
report.json; the command is ``dmlconform directml results``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dmlconform.backends.directml.stack_client import NOT_TRANSLATED
from dmlconform.report.results_page import CLASSES, Note
from dmlconform.results import REFUSED_PREFIX

#: The backend label notes match against (`report.results_page.label_of` gives the same).
LABEL = "directml-cpu"
_DEVICE_LACKS = re.compile(r"^the device does not support ([A-Z0-9, ]+) tensors")
_VKD3D = re.compile(r"vkd3d: (E\d{4}: .*?)\.?\)$")
_COMPUTED = ("PASS", "QUALITY_WARNING", "FAIL")


def why_not(message: str) -> str:
    """The reason class of a case that did not run (its NOT_SUPPORTED or rejection message)."""
    if message.startswith(REFUSED_PREFIX):
        message = message.split(": ", 1)[-1]
    if message.startswith(NOT_TRANSLATED):
        detail = _VKD3D.search(message)
        return "shader not translated by vkd3d" + (f" ({detail.group(1)})" if detail else "")
    lacks = _DEVICE_LACKS.match(message)
    if lacks:
        return f"device lacks {lacks.group(1)} (no 16-bit shader ops)"
    if message.startswith("DirectML rejected the desc"):
        return "DirectML rejected the desc (CreateOperator E_INVALIDARG)"
    return message[:120]


def _ran(case: Mapping[str, Any]) -> bool:
    """Computed by the kernels: a verdict on numbers, not a rejection."""
    return case["outcome"] in _COMPUTED and not str(case["message"]).startswith(REFUSED_PREFIX)


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _totals(cases: Sequence[Mapping[str, Any]]) -> list[str]:
    outcomes = Counter(c["outcome"] for c in cases)
    ran = [c for c in cases if _ran(c)]
    rejected = sum(1 for c in cases if c["outcome"] == "FAIL" and not _ran(c))
    reasons = Counter(why_not(str(c["message"])) for c in cases if c["outcome"] == "NOT_SUPPORTED")
    out = ["## Totals", "",
           "| cases | ran for real | PASS | QUALITY_WARNING | FAIL (computed) | FAIL (in-table desc rejected) "
           "| NOT_SUPPORTED | other |", "| --: | --: | --: | --: | --: | --: | --: | --: |",
           f"| {len(cases)} | {len(ran)} | {outcomes['PASS']} | {outcomes['QUALITY_WARNING']} "
           f"| {sum(1 for c in ran if c['outcome'] == 'FAIL')} | {rejected} | {outcomes['NOT_SUPPORTED']} "
           f"| {len(cases) - len(ran) - rejected - outcomes['NOT_SUPPORTED']} |",
           "", "NOT_SUPPORTED by reason:", "", "| reason | cases |", "| --- | --: |"]
    out += [f"| {_cell(r)} | {n} |" for r, n in sorted(reasons.items(), key=lambda x: (-x[1], x[0]))]
    return out


def _per_group(cases: Sequence[Mapping[str, Any]]) -> list[str]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for c in cases:
        groups[(c["operator"], c["dtype"])].append(c)
    out = ["## Per operator and data type", "",
           "*ran*: at least one case reached the kernels (then PASS / FAIL count them); otherwise the reasons "
           "its cases stopped, most frequent first.", "",
           "| operator | data type | cases | PASS | FAIL | NOT_SUPPORTED | ran or why not |",
           "| --- | --- | --: | --: | --: | --: | --- |"]
    for (op, dtype), group in sorted(groups.items()):
        count = Counter(c["outcome"] for c in group)
        if any(_ran(c) for c in group):
            status = "ran"
        else:
            reasons = Counter(why_not(str(c["message"])) for c in group)
            status = "; ".join(f"{r} ({n})" for r, n in sorted(reasons.items(), key=lambda x: (-x[1], x[0])))
        out.append(f"| {op} | {dtype} | {len(group)} | {count['PASS']} | {count['FAIL']} "
                   f"| {count['NOT_SUPPORTED']} | {_cell(status)} |")
    return out


def _fails(cases: Sequence[Mapping[str, Any]], notes: Sequence[Note]) -> tuple[list[str], list[str]]:
    """The FAIL section, and the case ids no note explains."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    unexplained: list[str] = []
    for c in cases:
        if c["outcome"] != "FAIL":
            continue
        note = next((n for n in notes if n.applies(LABEL, c["case_id"])), None)
        key = (c["operator"], c["dtype"], f"{CLASSES[note.kind]}: {note.text}" if note else "not analysed")
        groups[key].append(c)
        if note is None:
            unexplained.append(str(c["case_id"]))
    out = ["## Every FAIL, with its analysis", ""]
    if not groups:
        return [*out, "No case failed."], []
    out += ["| operator | data type | cases | first case | message | analysis |", "| --- | --- | --: | --- | --- | --- |"]
    for (op, dtype, analysis), group in sorted(groups.items()):
        first = sorted(str(c["case_id"]) for c in group)[0]
        message = str(group[0]["message"])
        out.append(f"| {op} | {dtype} | {len(group)} | `{_cell(first)}` | {_cell(message)} | {_cell(analysis)} |")
    return out, unexplained


def markdown(report: Mapping[str, Any], notes: Iterable[Note], *, command: str,
             preface: str = "") -> tuple[str, list[str]]:
    """The page (deterministic for one report, notes and preface) and the
    FAILs no note explains.  ``preface`` (markdown: how the stack was built,
    the shader census) comes after the run's line, as written."""
    cases = sorted(report["cases"], key=lambda c: str(c["case_id"]))
    run = report["run"]
    fails, unexplained = _fails(cases, tuple(notes))
    lines = ["# The real DirectML on the CPU: vkd3d and lavapipe on plain Linux", "",
             f"Generated by `{command}` from a run's report.json; do not edit by hand.", "",
             f"Run: `dmlconform run --backend directml` over the Linux CPU stack (`dmlconform directml setup-linux`): "
             f"{_cell(run.get('device', ''))}, feature level {run.get('feature_level')}, seed {run.get('seed')}, "
             f"{run.get('seconds')} s. See README, *The directml backend*, for the stack and what it can run.", "",
             *([preface.strip(), ""] if preface.strip() else []), *_totals(cases), "", *fails, "", *_per_group(cases)]
    return "\n".join(lines) + "\n", unexplained
