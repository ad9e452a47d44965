"""The external backend: the protocol against a Python fake that misbehaves on
purpose (runs everywhere), and end to end against the Node.js example in
examples/ (skipped where node is missing)."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.external import (
    ExternalBackend,
    ExternalBackendError,
    ExternalProtocolError,
    split_command,
    wire_dtype,
)
from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.errors import InputError
from dmlconform.families.elementwise.cases import generate
from dmlconform.results import Outcome
from dmlconform.runner import bind, run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

FAKE = Path(__file__).with_name("external_fake.py")
NODE = shutil.which("node")
EXAMPLE = REPO / "examples" / "external-node" / "backend.js"
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed: the example backend is Node.js")


def fake(mode: str, arg: str = "", **options: str) -> ExternalBackend:
    cmd = " ".join(shlex.quote(p) for p in (sys.executable, str(FAKE), mode, arg) if p)
    return ExternalBackend(cmd=cmd, **options)


def identity_pairs(level: m.FeatureLevel = m.FeatureLevel.FL_6_4):  # type: ignore[no-untyped-def]
    spec = load_spec(REPO / "specs" / "ELEMENT_WISE_IDENTITY.yaml")
    return [(spec, c) for c in generate(spec, level, seed=0)]


def one(pairs, text: str):  # type: ignore[no-untyped-def]
    return next((s, c) for s, c in pairs if text in c.id)


# -- options --------------------------------------------------------------------------------
def test_missing_cmd_is_a_usage_error_naming_the_option() -> None:
    with pytest.raises(InputError, match=r"--backend-arg cmd='PROGRAM ARGS'"):
        ExternalBackend()
    with pytest.raises(InputError, match="unknown option.*colour"):
        ExternalBackend(cmd="x", colour="red")
    with pytest.raises(InputError, match="timeout='soon' is not a number"):
        ExternalBackend(cmd="x", timeout="soon")


def test_run_without_cmd_exits_2_with_the_usage() -> None:
    result = CliRunner().invoke(main, ["run", "--backend", "external", "--no-progress"])
    assert result.exit_code == 2
    assert "--backend-arg cmd='PROGRAM ARGS'" in result.output
    assert "Traceback" not in result.output


def test_command_split_posix_and_windows() -> None:
    assert split_command("node 'my dir/b.js' --x 1", windows=False) == ["node", "my dir/b.js", "--x", "1"]
    assert split_command(r'"C:\Program Files\b.exe" --x', windows=True) == r'"C:\Program Files\b.exe" --x'


def test_wire_types_are_little_endian_and_4_bit_travels_as_bytes() -> None:
    assert wire_dtype(m.DataType.FLOAT16).str == "<f2"
    assert wire_dtype(m.DataType.UINT64).str == "<u8"
    assert wire_dtype(m.DataType.INT4) == np.dtype("int8")


# -- start and handshake --------------------------------------------------------------------
# Only the silent program's reason is the timeout, so only it waits the 1 s it
# tests; the others may take as long as a loaded machine needs to start Python
# (8 test processes on 2 cores once took over 1 s, and the reason became the
# timeout's): their reasons come from what the program does, never the clock.
@pytest.mark.parametrize(("mode", "start_timeout", "reason"), [
    ("exit-at-start", "120", r"exited before its hello reply \(exit status 2\); stderr: fake: cannot open the device"),
    ("silent-hello", "1", r"no hello reply within 1 s"),
    ("unavailable", "120", r"reports itself unavailable: no device here"),
    ("old-protocol", "120", r"protocol=99 is not supported"),
])
def test_a_failed_handshake_makes_the_backend_unavailable(mode: str, start_timeout: str, reason: str) -> None:
    info = fake(mode, start_timeout=start_timeout).info()
    assert not info.available
    assert info.reason is not None and __import__("re").search(reason, info.reason), info.reason


def test_a_program_that_cannot_start_is_unavailable_and_run_exits_3() -> None:
    info = ExternalBackend(cmd="/nonexistent/dmlconform-backend --x").info()
    assert not info.available and "cannot start" in str(info.reason)
    result = CliRunner().invoke(main, ["run", "--backend", "external", "--backend-arg",
                                       "cmd=/nonexistent/dmlconform-backend", "--op", "ELEMENT_WISE_IDENTITY"])
    assert result.exit_code == 3
    assert "backend external is unavailable: cannot start" in result.output


def test_hello_describes_the_backend_and_limits_the_operators() -> None:
    backend = fake("ok")
    info = backend.info()
    assert info.available and info.name == "external" and info.device == "fake (test)"
    assert info.feature_level is m.FeatureLevel.FL_6_4
    spec = load_spec(REPO / "specs" / "ACTIVATION_SOFTSIGN.yaml")
    case = next(iter(generate(spec, m.FeatureLevel.FL_6_4, seed=0)))
    support = backend.supports(spec, case)
    assert not support.supported and "does not implement ACTIVATION_SOFTSIGN" in str(support.reason)
    backend.close()


def test_an_operator_outside_the_hello_ops_is_not_supported_not_fail() -> None:
    # issue #22 item 5: the hello's "ops" is the program's list of operators it implements;
    # the cases of another operator are NOT_SUPPORTED (before: FAIL, an in-table rejection).
    backend = fake("ok")
    spec = load_spec(REPO / "specs" / "ACTIVATION_SOFTSIGN.yaml")
    cases = [c for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0) if c.expect_supported][:3]
    results = run_cases([(spec, c) for c in cases], backend)
    assert [r.outcome for r in results] == [Outcome.NOT_SUPPORTED] * 3
    assert results[0].message == "not implemented: fake does not implement ACTIVATION_SOFTSIGN (not in its hello ops)"
    assert backend.implements(load_spec(REPO / "specs" / "ELEMENT_WISE_IDENTITY.yaml")) is None
    backend.close()


# -- running cases --------------------------------------------------------------------------
def test_every_identity_layout_passes_through_the_protocol() -> None:
    pairs = identity_pairs()
    layouts = {c.layout for _, c in pairs}
    assert {"packed", "padded", "broadcast", "in_place"} <= {x.value for x in layouts}
    backend = fake("ok")
    results = run_cases(pairs, backend)
    assert {r.outcome for r in results} == {Outcome.PASS}, [r.message for r in results if r.outcome != Outcome.PASS]
    backend.close()


def test_in_place_output_lands_in_the_aliased_input_buffer() -> None:
    spec, case = one(identity_pairs(), "FLOAT32/4d/edges/in_place")
    backend = fake("ok")
    buffers = bind(case)
    backend.run(spec, case, buffers)
    out, inp = case.aliases[0]
    assert buffers[out] is buffers[inp]
    np.testing.assert_array_equal(buffers[inp].view(np.uint32), case.inputs[0].buffer.view(np.uint32))
    backend.close()


@pytest.mark.parametrize(("mode", "error", "text"), [
    ("error", ExternalBackendError, "out of device memory"),
    ("not-supported", NotSupportedError, "no strided tensors here"),
    ("garbage", ExternalProtocolError, "not UTF-8 JSON"),
    ("wrong-id", ExternalProtocolError, "names case 'another/case'"),
    ("bad-output", ExternalProtocolError, r"OutputTensor.npy: expected a 1-D array of float32, found shape=\(3,\) dtype=float64"),
])
def test_replies_become_verdict_exceptions(mode: str, error: type, text: str) -> None:
    spec, case = one(identity_pairs(), "FLOAT32/1d/edges")
    backend = fake(mode)
    with pytest.raises(error, match=text):
        backend.run(spec, case, bind(case))
    backend.close()


@pytest.mark.parametrize("how", ["exit", "segv"])
def test_a_program_that_dies_costs_one_case_and_is_restarted(how: str) -> None:
    if how == "segv" and sys.platform == "win32":
        pytest.skip("no SIGSEGV on Windows")
    pairs = [p for p in identity_pairs() if "FLOAT32" in p[1].id]
    victim = "FLOAT32/4d/edges/padded"
    backend = fake("die", f"segv:{victim}" if how == "segv" else victim)
    results = run_cases(pairs, backend)
    crashed = [r for r in results if r.outcome is Outcome.CRASH]
    assert [r.case_id for r in crashed] == [c.id for _, c in pairs if victim in c.id]
    status = "killed by signal 11 (SIGSEGV)" if how == "segv" else "exit status 3"
    assert f"the program died on this case ({status})" in crashed[0].message
    assert f"stderr tail: fake: dying on ELEMENT_WISE_IDENTITY/{victim}" in crashed[0].message
    assert all(r.outcome is Outcome.PASS for r in results if r not in crashed)
    backend.close()


def test_a_silent_program_is_killed_after_the_timeout_and_restarted() -> None:
    pairs = [p for p in identity_pairs() if "FLOAT32" in p[1].id][:4]
    backend = fake("hang", pairs[1][1].id, timeout="1")
    began = time.monotonic()
    results = run_cases(pairs, backend)
    assert time.monotonic() - began < 20
    assert [r.outcome for r in results] == [Outcome.PASS, Outcome.CRASH, Outcome.PASS, Outcome.PASS]
    assert "no reply within 1 s" in results[1].message
    backend.close()


def test_close_says_bye_and_removes_the_temporary_folder(tmp_path: Path) -> None:
    marker = tmp_path / "bye.txt"
    backend = fake("count", str(marker))
    spec, case = one(identity_pairs(), "FLOAT32/1d/edges")
    backend.run(spec, case, bind(case))
    folder = backend._state.folder
    assert folder is not None and folder.is_dir()
    backend.close()
    assert marker.read_text() == "bye"
    assert not folder.exists()


# -- the Node.js example, end to end --------------------------------------------------------
def _node_run(tmp_path: Path, *extra: str, program_args: str = "") -> tuple[int, dict]:
    cmd = f"{shlex.quote(str(NODE))} {shlex.quote(str(EXAMPLE))} {program_args}".strip()
    result = CliRunner().invoke(main, ["run", "--backend", "external", "--backend-arg", f"cmd={cmd}",
                                       "--no-progress", "-o", str(tmp_path / "r"), *extra])
    report = json.loads((tmp_path / "r" / "report.json").read_text()) if (tmp_path / "r").exists() else {}
    return result.exit_code, report


@needs_node
@pytest.mark.parametrize("op", ["ACTIVATION_SOFTSIGN", "ACTIVATION_HARD_SIGMOID", "ELEMENT_WISE_SIGN",
                                "ELEMENT_WISE_IDENTITY"])
def test_node_example_passes(tmp_path: Path, op: str) -> None:
    code, report = _node_run(tmp_path, "--op", op)
    outcomes = {c["outcome"] for c in report["cases"]}
    assert code == 0, [c for c in report["cases"] if c["outcome"] == "FAIL"][:2]
    assert outcomes <= {"PASS", "NOT_SUPPORTED"} and "PASS" in outcomes
    assert "node-example" in report["run"]["device"]


@needs_node
def test_node_example_dying_mid_run_costs_only_that_case(tmp_path: Path) -> None:
    victim = "ACTIVATION_SOFTSIGN/FLOAT32/4d/edges/padded"
    code, report = _node_run(tmp_path, "--op", "ACTIVATION_SOFTSIGN", program_args=f"--die-on {victim}")
    assert code == 1
    crashed = [c for c in report["cases"] if c["outcome"] == "CRASH"]
    assert [c["case_id"] for c in crashed] == [victim]
    assert "exit status 3" in crashed[0]["message"] and "dying on purpose" in crashed[0]["message"]
    rest = {c["outcome"] for c in report["cases"] if c["case_id"] != victim}
    assert rest <= {"PASS", "NOT_SUPPORTED"} and len(report["cases"]) > 10


@needs_node
def test_node_example_rejects_what_it_does_not_implement(tmp_path: Path) -> None:
    code, report = _node_run(tmp_path, "--op", "ACTIVATION_SHRINK", "--dtype", "INT32")
    assert code == 1
    assert {c["outcome"] for c in report["cases"]} == {"FAIL"}
    assert "not implemented for INT32" in report["cases"][0]["message"]
