"""Small hand-built results for the gating tests."""

from __future__ import annotations

from pathlib import Path

from dmlconform.results import CaseResult, Outcome, RunResult


def case(case_id: str, outcome: Outcome, message: str = "") -> CaseResult:
    op, dtype = (case_id.split("/") + ["FLOAT32"])[:2]
    return CaseResult(case_id=case_id, operator=op, dtype=dtype, level="6_4", dims=4, layout="packed",
                      outcome=outcome, message=message)


def run_of(*cases: CaseResult, **kw: object) -> RunResult:
    fields: dict[str, object] = dict(run_id="r1", backend="faulty", device="cpu", backend_version="0.1.0",
                                     feature_level="6_4", flush_subnormals=False, seed=0, command="dmlconform run",
                                     started="2026-01-01T00:00:00+00:00", finished="2026-01-01T00:00:01+00:00",
                                     cases=tuple(cases))
    fields.update(kw)
    return RunResult(**fields)  # type: ignore[arg-type]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path
