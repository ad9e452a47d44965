"""The real DirectML kernels on this machine's CPU (issue #25), marked ``real_directml``.

The stack (vkd3d 2 and glibc from Debian sid, lavapipe, the D3D12 bridge, the
torch-directml wheel's libdirectml.so) is set up through the documented
command, ``dmlconform directml setup-linux``, when the default cache lacks it
(a Debian machine, as root, with the network; about half a minute, then
cached).  The tests skip, with the command's own reason, only when it cannot
be set up.  Each case goes through the project's directml backend in its
worker process and is judged against the oracle by ``dmlconform run``.

What vkd3d 2.1 can translate decides what runs: the packed and in-place
shaders of ELEMENT_WISE_IDENTITY, ELEMENT_WISE_IF and ACTIVATION_RELU_GRAD
(integers); strided (padded) and broadcast layouts use shaders with integer
division, which vkd3d 2.1 cannot translate (dx.op.binaryWithTwoOuts), so those
cases must be NOT_SUPPORTED with exactly that reason, never FAIL.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dmlconform.backends.directml.library import Unavailable
from dmlconform.backends.directml.linux_stack import Stack, check, default_stack_dir
from dmlconform.backends.directml.stack_client import NOT_TRANSLATED
from dmlconform.cli import main

pytestmark = pytest.mark.real_directml

#: (operator, data type) that vkd3d 2.1 + lavapipe run for real (the packed shaders translate).
RUN_FOR_REAL = {(op, t) for op in ("ELEMENT_WISE_IDENTITY", "ELEMENT_WISE_IF")
                for t in ("FLOAT32", "FLOAT64", "INT8", "INT32", "INT64", "UINT8", "UINT32", "UINT64")} | \
    {("ACTIVATION_RELU_GRAD", "INT8"), ("ACTIVATION_RELU_GRAD", "INT32")}
#: What the device reports it lacks (DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT: lavapipe has no 16-bit shader ops).
NO_16_BIT = ("FLOAT16", "INT16", "UINT16")


@pytest.fixture(scope="session")
def linux_stack() -> Stack:
    """The default cache's stack, set up through the documented command when missing."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the Linux CPU stack needs Linux")
    stack = Stack(default_stack_dir())
    try:
        check(stack)
        return stack
    except Unavailable:
        pass
    result = CliRunner().invoke(main, ["directml", "setup-linux"])
    if result.exit_code != 0:
        lines = [x for x in result.output.splitlines() if x.strip()] or [f"exit {result.exit_code}"]
        pytest.skip(f"the Linux CPU stack cannot be set up here: {lines[-1]}")
    check(stack)
    return stack


def _run(tmp_path: Path, *ops: str) -> list[dict[str, Any]]:
    args = ["run", "--backend", "directml", "-o", str(tmp_path)]
    for op in ops:
        args += ["--op", op]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    cases: list[dict[str, Any]] = json.loads((tmp_path / "report.json").read_text())["cases"]
    return cases


def test_identity_if_and_relu_grad_run_for_real_and_match_the_oracle(linux_stack: Stack, tmp_path: Path) -> None:
    cases = _run(tmp_path, "ELEMENT_WISE_IDENTITY", "ELEMENT_WISE_IF", "ACTIVATION_RELU_GRAD")
    outcomes = Counter(c["outcome"] for c in cases)
    assert set(outcomes) == {"PASS", "NOT_SUPPORTED"}, outcomes
    passed = Counter((c["operator"], c["dtype"]) for c in cases if c["outcome"] == "PASS")
    assert set(passed) == RUN_FOR_REAL
    assert all(n >= 9 for n in passed.values()), passed
    layouts = Counter((c["operator"], c["layout"]) for c in cases if c["outcome"] == "PASS")
    assert layouts[("ELEMENT_WISE_IDENTITY", "in_place")] == 8  # every data type, bound in place
    for c in cases:
        if c["outcome"] != "NOT_SUPPORTED":
            continue
        if c["dtype"] in NO_16_BIT:
            assert c["message"].startswith(f"the device does not support {c['dtype']} tensors "
                                           "(DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT)"), c
        elif c["layout"] in ("padded", "broadcast"):
            assert c["message"].startswith(NOT_TRANSLATED), c
            assert "dx.op.binaryWithTwoOuts" in c["message"], c
        elif c["expect_supported"]:
            assert c["message"].startswith(NOT_TRANSLATED), c  # RELU_GRAD's float shaders
        else:
            assert c["message"].startswith(("DirectML rejected the desc: IDMLDevice::CreateOperator",
                                            NOT_TRANSLATED)), c


def test_hard_swish_reaches_compile_operator(linux_stack: Stack, tmp_path: Path) -> None:
    """The exact "1/6" default now builds a desc DirectML accepts; its shader then stops at vkd3d."""
    cases = _run(tmp_path, "ACTIVATION_HARD_SWISH")
    float32 = [c for c in cases if c["dtype"] == "FLOAT32" and c["expect_supported"]]
    assert float32 and all(c["outcome"] == "NOT_SUPPORTED" and c["message"].startswith(NOT_TRANSLATED)
                           for c in float32), float32[:2]
