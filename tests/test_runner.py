"""The runner and the `run` command: batching gives per-case results, binding
poisons outputs and honours aliases, exit codes and reports."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner

from dmlconform.backends.base import BackendCrashError
from dmlconform.backends.cpu import CpuBackend
from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.families.elementwise.cases import generate
from dmlconform.results import Outcome, ToleranceOverride
from dmlconform.runner import bind, run_case, run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

OPS = ("ACTIVATION_SHRINK", "ELEMENT_WISE_SIGN", "ACTIVATION_HARD_SIGMOID", "ELEMENT_WISE_ADD")


def _pairs(op: str):  # type: ignore[no-untyped-def]
    spec = load_spec(REPO / "specs" / f"{op}.yaml")
    return [(spec, c) for c in generate(spec, m.FeatureLevel.FL_6_4, seed=3)]


def _strip(result):  # type: ignore[no-untyped-def]
    return dataclasses.replace(result, seconds=0.0)


@pytest.mark.parametrize("op", (*OPS, "ADAM_OPTIMIZER"))
def test_batched_results_equal_per_case_results(op: str) -> None:
    """ADAM_OPTIMIZER: three outputs, each compared batch-wide."""
    pairs = _pairs(op)
    backend = CpuBackend()
    batched = run_cases(pairs, backend)
    single = [run_case(s, c, backend) for s, c in pairs]
    assert [repr(_strip(r)) for r in batched] == [repr(_strip(r)) for r in single]  # repr: NaN == NaN
    assert [r.case_id for r in batched] == [c.id for _, c in pairs]


def test_bind_poisons_outputs_and_shares_aliased_buffers() -> None:
    pairs = _pairs("ACTIVATION_SOFTSIGN")
    packed = next(c for _, c in pairs if not c.aliases and c.expect_supported)
    buffers = bind(packed)
    assert np.all(buffers["OutputTensor"] != 0)
    assert buffers["InputTensor"] is not packed.inputs[0].buffer  # a copy: the case stays read-only
    aliased = next(c for _, c in pairs if c.aliases)
    shared = bind(aliased)
    out, inp = aliased.aliases[0]
    assert shared[out] is shared[inp]


class _Lazy(CpuBackend):
    """Claims to run but never writes the output."""

    def run(self, spec, case, buffers) -> None:  # type: ignore[no-untyped-def]
        return None


def test_unwritten_outputs_fail() -> None:
    spec, case = next((s, c) for s, c in _pairs("ELEMENT_WISE_IDENTITY") if c.expect_supported)
    result = run_cases([(spec, case)], _Lazy())[0]
    assert result.outcome is Outcome.FAIL and result.worst


class _Raises(CpuBackend):
    def run(self, spec, case, buffers) -> None:  # type: ignore[no-untyped-def]
        raise RuntimeError("device lost")


def test_a_raising_backend_fails_the_case_with_the_reason() -> None:
    spec, case = _pairs("ACTIVATION_SOFTSIGN")[0]
    result = run_cases([(spec, case)], _Raises())[0]
    assert result.outcome is Outcome.FAIL
    assert result.message == "the backend raised RuntimeError: device lost"


class _Crashes(CpuBackend):
    def run(self, spec, case, buffers) -> None:  # type: ignore[no-untyped-def]
        raise BackendCrashError("process exited with signal 11")


def test_a_crashed_out_of_process_backend_is_crash() -> None:
    spec, case = _pairs("ACTIVATION_SOFTSIGN")[0]
    result = run_cases([(spec, case)], _Crashes())[0]
    assert result.outcome is Outcome.CRASH
    assert "signal 11" in result.message


class _SixtyFourUlpOff(CpuBackend):
    """Every finite non-zero FLOAT32 output 64 ULP further from zero (softsign
    stays below 1, so nothing overflows)."""

    def run(self, spec, case, buffers) -> None:  # type: ignore[no-untyped-def]
        super().run(spec, case, buffers)
        for out in case.outputs:
            buf = buffers[out.name]
            finite = np.isfinite(buf) & (buf != 0)
            buf.view(np.int32)[finite] += 64


def test_tolerance_override_loosens_only_its_operator_and_type() -> None:
    pairs = [(s, c) for s, c in _pairs("ACTIVATION_SOFTSIGN")
             if c.expect_supported and c.dtype.name == "FLOAT32" and not c.aliases]
    strict = run_cases(pairs, _SixtyFourUlpOff())
    assert any(r.outcome is Outcome.FAIL for r in strict)
    loose = run_cases(pairs, _SixtyFourUlpOff(), overrides={
        ("ACTIVATION_SOFTSIGN", "FLOAT32"): ToleranceOverride("ACTIVATION_SOFTSIGN", "FLOAT32", ulp=100)})
    assert not any(r.outcome is Outcome.FAIL for r in loose)
    other = run_cases(pairs, _SixtyFourUlpOff(), overrides={
        ("ACTIVATION_SOFTSIGN", "FLOAT16"): ToleranceOverride("ACTIVATION_SOFTSIGN", "FLOAT16", ulp=100)})
    assert [r.outcome for r in other] == [r.outcome for r in strict]


def test_on_start_names_each_case_before_the_backend_runs_it() -> None:
    pairs = _pairs("ACTIVATION_SOFTSIGN")[:5]
    seen: list[int] = []
    run_cases(pairs, CpuBackend(), on_start=seen.append)
    assert seen == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("isolate", [(), ("--no-isolate",)], ids=["workers", "no-isolate"])
def test_a_failing_cases_repro_line_reproduces_it(tmp_path, isolate) -> None:  # type: ignore[no-untyped-def]
    """--backend faulty --backend-arg faults=...: the repro line has the
    faults, and running it fails the same case again."""
    import shlex

    out = tmp_path / "first"
    first = CliRunner().invoke(main, ["run", "--op", "ACTIVATION_SOFTSIGN", "--dtype", "FLOAT32", "--no-progress",
                                      "--backend", "faulty", "--backend-arg", "faults=wrong-in-8d", "-j", "1",
                                      *isolate, "-o", str(out)])
    assert first.exit_code == 1, first.output
    failed = [c for c in json.loads((out / "report.json").read_text())["cases"] if c["outcome"] == "FAIL"]
    assert failed and all("--backend-arg faults=wrong-in-8d " in c["repro"] for c in failed)
    argv = shlex.split(failed[0]["repro"])
    assert argv[:2] == ["dmlconform", "run"]
    again = CliRunner().invoke(main, [*argv[1:], "--no-progress", "-o", str(tmp_path / "again")])
    assert again.exit_code == 1, again.output
    cases = json.loads((tmp_path / "again" / "report.json").read_text())["cases"]
    assert [(c["case_id"], c["outcome"]) for c in cases] == [(failed[0]["case_id"], "FAIL")]


class _OneByOne(CpuBackend):
    """The cpu reference without ``run_batch``: the runner's per-case path."""

    run_batch = None  # type: ignore[assignment]


@pytest.mark.parametrize("op", (*OPS, "ADAM_OPTIMIZER", "BATCH_NORMALIZATION", "ELEMENT_WISE_CLIP"))
def test_run_batch_results_equal_run_results(op: str) -> None:
    """The cpu reference joins like cases into one array: the same results as
    one ``run`` per case (in-place, broadcast and padded cases included)."""
    pairs = _pairs(op)
    assert hasattr(CpuBackend(), "run_batch")
    batched, single = run_cases(pairs, CpuBackend()), run_cases(pairs, _OneByOne())
    assert [repr(_strip(r)) for r in batched] == [repr(_strip(r)) for r in single]  # repr: NaN == NaN


class _Recorder(CpuBackend):
    """The cpu reference, recording the cases of each ``run_batch`` call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[object]] = []

    def run_batch(self, items):  # type: ignore[no-untyped-def]
        self.calls.append([c for _, c, _ in items])
        return super().run_batch(items)


@pytest.mark.parametrize("op", ("ACTIVATION_HARD_SIGMOID", "ELEMENT_WISE_CLIP"))
def test_one_run_batch_call_gets_every_type_and_attribute_set_of_an_operator(op: str) -> None:
    """The runner queues cases for ``run_batch`` by operator alone (a
    backend builds per data type and attribute set once per call), while
    the oracle still compares one combination at a time: results equal the
    one-by-one path."""
    pairs = _pairs(op)
    backend = _Recorder()
    batched, single = run_cases(pairs, backend), run_cases(pairs, _OneByOne())
    assert [repr(_strip(r)) for r in batched] == [repr(_strip(r)) for r in single]  # repr: NaN == NaN
    assert len(backend.calls) == 1  # one operator, small cases: one call (no cut here)
    call = backend.calls[0]
    assert len({tuple((t.name, t.dtype) for t in (*c.inputs, *c.outputs)) for c in call}) > 1
    assert len({c.attributes for c in call}) > 1


class _Batcher(CpuBackend):
    """A batch backend that records the order of events and fails on demand:
    case k of a call gets ``verdicts[case id]`` instead of being computed."""

    def __init__(self, events: list[object], verdicts: dict[str, Exception]) -> None:
        super().__init__()
        self.events, self.verdicts = events, verdicts

    def run_batch(self, items):  # type: ignore[no-untyped-def]
        self.events.append(("call", len(items)))
        out = super().run_batch([it for it in items if it[1].id not in self.verdicts])
        got = iter(out)
        return [self.verdicts[c.id] if c.id in self.verdicts else next(got) for _, c, _ in items]


def test_a_batch_is_started_whole_before_the_call_and_errors_are_per_case() -> None:
    from dmlconform.backends.base import NotSupportedError

    pairs = [(s, c) for s, c in _pairs("ACTIVATION_SOFTSIGN") if c.expect_supported][:6]
    assert len({(c.dtype, c.attributes) for _, c in pairs}) == 1  # one batch key
    ids = [c.id for _, c in pairs]
    events: list[object] = []
    verdicts: dict[str, Exception] = {ids[1]: NotSupportedError("no fp16 today"),
                                      ids[2]: BackendCrashError("exit code 3"), ids[3]: RuntimeError("device lost")}
    results = run_cases(pairs, _Batcher(events, verdicts), on_start=events.append)
    assert events == [0, 1, 2, 3, 4, 5, ("call", 6)]
    # a case the backend's support query rejects is started and reported before the call
    rejected = next((s, c) for s, c in _pairs("ACTIVATION_SOFTSIGN") if not c.expect_supported
                    and c.dtype == pairs[0][1].dtype and c.attributes == pairs[0][1].attributes)
    events.clear()
    run_cases([pairs[0], rejected, pairs[4]], _Batcher(events, {}), on_start=events.append,
              progress=lambda r: events.append(r.outcome))
    assert events == [0, 1, Outcome.NOT_SUPPORTED, 2, ("call", 2), Outcome.PASS, Outcome.PASS]
    assert [r.outcome for r in results] == [Outcome.PASS, Outcome.FAIL, Outcome.CRASH, Outcome.FAIL, Outcome.PASS,
                                            Outcome.PASS]
    assert results[1].message.startswith("rejected a configuration that the 6_4 table supports: no fp16 today")
    assert results[2].message == "the backend crashed: exit code 3"
    assert results[3].message == "the backend raised RuntimeError: device lost"


class _BatchRaises(CpuBackend):
    def run_batch(self, items):  # type: ignore[no-untyped-def]
        raise BackendCrashError("the process died")


def test_a_batch_call_that_raises_gives_its_error_to_every_case_and_large_cases_use_run() -> None:
    pairs = [(s, c) for s, c in _pairs("ACTIVATION_SOFTSIGN") if c.expect_supported][:4]
    results = run_cases(pairs, _BatchRaises())
    assert [r.outcome for r in results] == [Outcome.CRASH] * 4
    assert all(r.message == "the backend crashed: the process died" for r in results)
    from bench.bench_run import large_case

    spec, case = large_case(1 << 17)  # above BATCH_CASE_ELEMENTS: run, not run_batch
    assert run_cases([(spec, case)], _BatchRaises())[0].outcome is Outcome.PASS


def test_negative_cases_are_not_supported_on_the_reference() -> None:
    results = run_cases(_pairs("ACTIVATION_SOFTSIGN"), CpuBackend())
    negative = [r for r in results if not r.expect_supported]
    assert negative and all(r.outcome is Outcome.NOT_SUPPORTED for r in negative)


def test_run_command_passes_and_writes_reports(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "r"
    result = CliRunner().invoke(main, ["run", "--op", "ACTIVATION_SOFTSIGN", "--op", "ELEMENT_WISE_SIGN",
                                       "--no-progress", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["junit.xml", "report.html", "report.json"]
    report = json.loads((out / "report.json").read_text())
    ids = [c["case_id"] for c in report["cases"]]
    assert ids and all(i.startswith(("ACTIVATION_SOFTSIGN/", "ELEMENT_WISE_SIGN/")) for i in ids)
    again = tmp_path / "s"
    CliRunner().invoke(main, ["run", "--op", "ACTIVATION_SOFTSIGN", "--op", "ELEMENT_WISE_SIGN", "--no-progress",
                              "-o", str(again)])
    second = json.loads((again / "report.json").read_text())
    for r in (report, second):
        r["run"].pop("started"), r["run"].pop("finished"), r["run"].pop("run_id"), r["run"].pop("seconds")
        for c in r["cases"] + r["groups"]:
            c.pop("seconds")
    assert report == second  # same seed, same report apart from timestamps


def test_run_one_case_by_id(tmp_path) -> None:  # type: ignore[no-untyped-def]
    case_id = _pairs("ACTIVATION_SHRINK")[5][1].id
    result = CliRunner().invoke(main, ["run", "--case", case_id, "--seed", "3", "--no-progress", "-o", str(tmp_path)])
    assert result.exit_code == 0
    cases = json.loads((tmp_path / "report.json").read_text())["cases"]
    assert [c["case_id"] for c in cases] == [case_id]


def test_run_usage_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad_op = CliRunner().invoke(main, ["run", "--op", "NOPE", "-o", str(tmp_path)])
    assert bad_op.exit_code == 2 and "--op NOPE: no such operator" in bad_op.output
    no_case = CliRunner().invoke(main, ["run", "--op", "ACTIVATION_SOFTSIGN", "-k", "zzz", "-o", str(tmp_path)])
    assert no_case.exit_code == 2 and "no case matches" in no_case.output
    level = CliRunner().invoke(main, ["run", "--feature-level", "9_9", "-o", str(tmp_path)])
    assert level.exit_code == 2 and "unknown feature level" in level.output


def test_unknown_backend_exits_3(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(main, ["run", "--backend", "nosuch", "-o", str(tmp_path)])
    assert result.exit_code == 3


@pytest.mark.parametrize("isolate", [(), ("--no-isolate",)], ids=["workers", "no-isolate"])
def test_unavailable_backend_exits_3_or_skips(tmp_path, monkeypatch, isolate) -> None:  # type: ignore[no-untyped-def]
    """The backend says it cannot run here: in a worker (which built it) or
    in this process, the run stops at once with its reason."""
    from tests.backends.install import install

    site = install(REPO / "tests" / "backends" / "fake_backend_pkg", tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    args = ["run", "--backend", "fake-offline", *isolate, "--no-progress", "-o", str(tmp_path / "r")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3 and result.output.strip() == "backend fake-offline is unavailable: libfake.so not found"
    assert CliRunner().invoke(main, [*args, "--skip-unavailable"]).exit_code == 0
    assert not (tmp_path / "r").exists()


def test_reference_agrees_with_the_oracle_on_the_whole_default_suite() -> None:
    """Issue 5: oracle and reference agree on the default suite (no FAIL, no
    ERROR); QUALITY_WARNING is allowed only where the oracle says an honest
    step-by-step float evaluation overflows or cancels."""
    from dmlconform.families.elementwise.binding import is_runnable
    from dmlconform.spec.files import spec_files

    specs = [load_spec(p) for p in spec_files([REPO / "specs"])]
    pairs = [(s, c) for s in specs if is_runnable(s, m.FeatureLevel.FL_6_4)[0]
             for c in generate(s, m.FeatureLevel.FL_6_4, seed=0)]
    results = run_cases(pairs, CpuBackend())
    bad = [f"{r.case_id}: {r.outcome.value} {r.message}" for r in results if r.outcome.failed]
    assert not bad, "\n".join(bad[:20])
    assert len({r.operator for r in results}) >= 79 and len(results) > 5000
    warned = {r.operator for r in results if r.outcome is Outcome.QUALITY_WARNING}
    assert warned <= {"ACTIVATION_TANH", "ACTIVATION_PARAMETRIC_SOFTPLUS", "ACTIVATION_SOFTPLUS",
                      "ADAM_OPTIMIZER", "BATCH_NORMALIZATION", "ELEMENT_WISE_TANH"}, warned


@pytest.mark.parametrize("op", ("ACTIVATION_CELU", "ACTIVATION_SHRINK", "ELEMENT_WISE_ADD", "ADAM_OPTIMIZER"))
def test_batched_results_of_a_failing_backend_equal_per_case_results(op: str) -> None:
    """The batch path takes apart only the cases with a non-PASS element;
    every other one (alternatives counted batch-wide) must still be what
    `run_case` finds: a backend with planted faults gives both kinds."""
    from dmlconform.backends.faulty import FaultyBackend

    pairs = _pairs(op)
    backend = FaultyBackend("one-ulp,nan-to-zero,wrong-in-8d,in-place-corrupting")
    batched = run_cases(pairs, backend)
    single = [run_case(s, c, backend) for s, c in pairs]
    assert [repr(_strip(r)) for r in batched] == [repr(_strip(r)) for r in single]  # repr: NaN == NaN
    outcomes = {r.outcome for r in batched}
    assert Outcome.FAIL in outcomes and (Outcome.PASS in outcomes or op == "ADAM_OPTIMIZER"), outcomes
    assert any(r.alternatives for r in batched) or op != "ACTIVATION_CELU"


def test_an_unknown_dtype_is_an_input_error_naming_the_known_ones(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue #20: --dtype FLOAT99 said "no case matches the selection"."""
    result = CliRunner().invoke(main, ["run", "--op", "ACTIVATION_SHRINK", "--dtype", "FLOAT16", "--dtype", "FLOAT99",
                                       "-o", str(tmp_path)])
    assert (result.exit_code, result.output) == (2, (
        "error: --dtype FLOAT99: no such data type (known: FLOAT64, FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, "
        "INT4, UINT64, UINT32, UINT16, UINT8, UINT4); did you mean FLOAT64?\n"))
    assert not (tmp_path / "report.json").exists()


def test_dtype_takes_any_case_and_the_constant_name(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(main, ["run", "--op", "ACTIVATION_SHRINK", "--dtype", "float16", "--dtype",
                                       "DML_TENSOR_DATA_TYPE_FLOAT32", "-k", "4d/edges/Bias=0,Threshold=0.5/padded",
                                       "--no-isolate", "--no-progress", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    cases = json.loads((tmp_path / "report.json").read_text())["cases"]
    assert sorted(c["case_id"] for c in cases) == ["ACTIVATION_SHRINK/FLOAT16/4d/edges/Bias=0,Threshold=0.5/padded",
                                                   "ACTIVATION_SHRINK/FLOAT32/4d/edges/Bias=0,Threshold=0.5/padded"]


# -- attribute values outside the doc's domain (issue #22 item 4) ------------------------------
def _invalid_softplus():  # type: ignore[no-untyped-def]
    return next((s, c) for s, c in _pairs("ACTIVATION_SOFTPLUS") if c.out_of_domain)


class _RejectsSteepness(CpuBackend):
    def supports(self, spec, case):  # type: ignore[no-untyped-def]
        from dmlconform.backends.base import Support

        return Support(False, "E_INVALIDARG: Steepness < 1")


class _RaisesNotSupported(CpuBackend):
    def run(self, spec, case, buffers) -> None:  # type: ignore[no-untyped-def]
        from dmlconform.backends.base import NotSupportedError

        raise NotSupportedError("Steepness must be >= 1")


class _WrongValue(CpuBackend):
    def run(self, spec, case, buffers) -> None:  # type: ignore[no-untyped-def]
        super().run(spec, case, buffers)
        buffers["OutputTensor"][...] = 3.0


def test_an_out_of_domain_case_passes_when_rejected_cleanly_or_computed_right() -> None:
    spec, case = _invalid_softplus()
    assert case.id == "ACTIVATION_SOFTPLUS/FLOAT32/4d/invalid/Steepness=0.99999994"
    right = run_cases([(spec, case)], CpuBackend())[0]
    assert (right.outcome, right.message) == (
        Outcome.PASS, "computed the formula correctly for Steepness outside the doc's range (allowed)")
    rejected = run_cases([(spec, case)], _RejectsSteepness())[0]
    assert (rejected.outcome, rejected.message) == (
        Outcome.PASS, "rejected cleanly Steepness outside the doc's range: E_INVALIDARG: Steepness < 1")
    raised = run_cases([(spec, case)], _RaisesNotSupported())[0]
    assert (raised.outcome, raised.message) == (
        Outcome.PASS, "rejected cleanly Steepness outside the doc's range: Steepness must be >= 1")


def test_an_out_of_domain_case_fails_when_computed_wrong_or_the_backend_breaks() -> None:
    spec, case = _invalid_softplus()
    wrong = run_cases([(spec, case)], _WrongValue())[0]
    assert wrong.outcome is Outcome.FAIL and wrong.message.startswith("OutputTensor: Mismatched elements")
    broken = run_cases([(spec, case)], _Raises())[0]
    assert (broken.outcome, broken.message) == (Outcome.FAIL, "the backend raised RuntimeError: device lost")


@pytest.mark.parametrize(("seed", "case_id"), [
    (1, "ADAM_OPTIMIZER/FLOAT32/4d/edges/LearningRate=1,Beta1=0.9,Beta2=0.999,Epsilon=1e-08"),
    (0, "ADAM_OPTIMIZER/FLOAT32/4d/edges/LearningRate=0.5,Beta1=0.9,Beta2=0.99999994,Epsilon=1e-08"),
])
def test_adam_with_the_docs_typical_betas_is_never_fail_on_the_reference(seed: int, case_id: str) -> None:
    """Issue #22 item 4: the generator uses the doc's typical Beta1 = 0.9,
    Beta2 = 0.999 and the domain's edges, where a tiny random T makes
    1 - pow(Beta2, T) round to 0 even in float64 (sqrt's slope there was
    infinite, and the bound was lost: the oracle took X unchanged for exact),
    and where an infinite X meets sqrt of a cancelled negative (exact NaN,
    float32 inf).  The reference computes the step in float64 and rounds
    once (issue #32's range rule), so it passes outright."""
    spec = load_spec(REPO / "specs" / "ADAM_OPTIMIZER.yaml")
    (case,) = generate(spec, m.FeatureLevel.FL_6_4, seed=seed, keep=lambda i, d: i == case_id)
    result = run_cases([(spec, case)], CpuBackend())[0]
    assert result.outcome is Outcome.PASS, result.message


@pytest.mark.parametrize(("seed", "case_id"), [
    (0, "ADAM_OPTIMIZER/FLOAT32/4d/edges/LearningRate=0,Beta1=0.9,Beta2=0.999,Epsilon=0"),
    (2, "ADAM_OPTIMIZER/FLOAT32/4d/edges/LearningRate=0.5,Beta1=0.9,Beta2=0,Epsilon=1e-08"),
])
def test_adam_pairs_are_never_fail_on_the_reference(seed: int, case_id: str) -> None:
    """Issue #22 item 3's attribute pairs: with Epsilon 0, ``G * G`` underflows
    in float32, so ``sqrt(V) + Epsilon`` is 0 and ``0 * inf`` NaN (the divisor
    check ran after the division's error scaled the divisor's bound in place,
    and skipped divisors of known sign); with Beta2 0 and G = -0, V is an
    exact 0 under sqrt and its bound was 0 / 0 = NaN, which lost the
    cancellation of ``1 - pow(Beta1, T)``.  Neither may FAIL the reference."""
    spec = load_spec(REPO / "specs" / "ADAM_OPTIMIZER.yaml")
    (case,) = generate(spec, m.FeatureLevel.FL_6_4, seed=seed, keep=lambda i, d: i == case_id)
    result = run_cases([(spec, case)], CpuBackend())[0]
    assert not result.outcome.failed, result.message
