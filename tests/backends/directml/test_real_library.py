"""Tier (c): the real Linux libdirectml.so (torch-directml wheel) as a desc validator.

The wheel is fetched once with pip into the cache (``DMLCONFORM_CACHE`` or
~/.cache/dmlconform), the fake libdxcore.so is compiled with cc, and one
subprocess started with LD_LIBRARY_PATH set creates the device on the fake
D3D12 device and validates every desc below.  CompileOperator is never called.
Skips, with the reason, where the download or cc is unavailable.
"""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from dmlconform.backends.directml import abi
from dmlconform.backends.directml import tables as v
from dmlconform.backends.directml.desc_worker import DescJob, validate_descs
from dmlconform.backends.directml.library import Unavailable, validator_libs
from dmlconform.cli import main
from dmlconform.spec.model import FeatureLevel
from tests.backends.directml.conftest import spec, spec_paths

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux libdirectml.so needs Linux")
CAPS = {"fp16": True, "int64": True, "fp64": True}


@pytest.fixture(scope="module")
def libs():  # type: ignore[no-untyped-def]
    try:
        return validator_libs()
    except Unavailable as exc:
        pytest.skip(f"real-library tier skipped: {exc}")


def _t(dtype: str, sizes: list[int]) -> list[object]:
    return [dtype, sizes]


def _unary(op: str, dtype: str, sizes: list[int] | None = None, out: str | None = None,
           out_sizes: list[int] | None = None, **attrs: object) -> DescJob:
    sizes = sizes or [1, 1, 2, 3]
    return DescJob(op, {"InputTensor": _t(dtype, sizes), "OutputTensor": _t(out or dtype, out_sizes or sizes)},
                   attrs, dtype)


#: (job, accepted?) judged by the real library in one subprocess.
CASES = [
    (_unary("ACTIVATION_SOFTSIGN", "FLOAT32"), True),
    (_unary("ACTIVATION_SOFTSIGN", "FLOAT16"), True),
    (_unary("ACTIVATION_SOFTSIGN", "INT32"), False),                       # not in the table
    (_unary("ACTIVATION_SOFTSIGN", "FLOAT32", out="FLOAT16"), False),       # mismatched data types
    (_unary("ACTIVATION_SOFTSIGN", "FLOAT32", out_sizes=[1, 1, 2, 4]), False),  # mismatched sizes
    (_unary("ACTIVATION_SHRINK", "FLOAT32", Bias=0.5, Threshold=1.0), True),
    (_unary("ACTIVATION_SWISH", "FLOAT16", SigmoidInputScale=1.0), True),   # introduced at 6_2
    (_unary("ACTIVATION_HARD_SIGMOID", "FLOAT32", Alpha=0.2, Beta=0.5), True),
    (_unary("ELEMENT_WISE_SIGN", "INT8", [1, 2, 3]), True),
    (_unary("ELEMENT_WISE_IDENTITY", "FLOAT32", **{"ScaleBias.Scale": 2.0, "ScaleBias.Bias": 1.0}), True),
    (_unary("ELEMENT_WISE_CLIP1", "INT64", Min=-3, Max=3), True),           # scalar unions typed INT64
    (_unary("ELEMENT_WISE_CLIP1", "FLOAT16", Min=-0.5, Max=0.5), True),
    (_unary("ELEMENT_WISE_ROUND", "FLOAT32", RoundingMode="DML_ROUNDING_MODE_HALVES_TO_NEAREST_EVEN"), True),
    (_unary("TILE", "FLOAT32", [1, 1, 2, 3], out_sizes=[1, 2, 2, 3], Repeats=[1, 2, 1, 1]), True),  # array + count
    (_unary("TILE", "FLOAT32", [1, 1, 2, 3], out_sizes=[1, 2, 2, 3], Repeats=[1, 1, 1, 1]), False),
    (DescJob("ELEMENT_WISE_ADD1", {k: _t("FLOAT32", [2, 3]) for k in ("ATensor", "BTensor", "OutputTensor")},
             {"FusedActivation": {"op": "ACTIVATION_RELU"}}, "FLOAT32"), True),  # a nested desc
    (DescJob("ELEMENT_WISE_ADD", {"ATensor": _t("FLOAT32", [2, 3]), "BTensor": _t("FLOAT32", [2, 3])}, {},
             "FLOAT32"), False),                                           # NULL output
    (DescJob("ACTIVATION_SOFTSIGN", _unary("ACTIVATION_SOFTSIGN", "FLOAT32").tensors, {}, "FLOAT32", 9999), False),
    (DescJob("ACTIVATION_SHRINK", _unary("ACTIVATION_SHRINK", "FLOAT32").tensors, {}, "FLOAT32", 113), False),
]


def _planned(op: str, *, pinned: bool = True) -> DescJob:
    """validate's first in-table desc of ``op`` (its rule's sizes and attributes)."""
    inside = [c for c in v.plan(spec(op), FeatureLevel.FL_6_2) if c.expect]
    return next(c for c in inside if pinned or "TrainingStepTensor FLOAT32" in c.label).job


#: Operators every generic desc of which the library rejected, accepted with their validate rule.
CASES += [(_planned(op), True) for op in ("MAX_POOLING2", "CONVOLUTION", "LSTM", "DEPTH_TO_SPACE1", "ROI_ALIGN1",
                                          "GATHER_ND1", "JOIN", "ADAM_OPTIMIZER")]
CASES += [(_planned("ADAM_OPTIMIZER", pinned=False), False)]  # the table's FLOAT32 TrainingStepTensor: the doc errs


@pytest.fixture(scope="module")
def judged(libs):  # type: ignore[no-untyped-def]
    return validate_descs(libs, spec_paths(), [job for job, _ in CASES], caps=CAPS)


def test_device_is_created_on_the_fake_device(judged) -> None:  # type: ignore[no-untyped-def]
    device, _ = judged
    assert device.created == "S_OK (0x00000000)"
    assert device.max_level == "6_2"
    levels = dict(device.levels)
    assert levels["6_2"].startswith("S_OK") and levels["6_3"].startswith("DXGI_ERROR_UNSUPPORTED")
    assert dict(device.dtypes)["FLOAT16"] is True and dict(device.dtypes)["INT4"] is False
    assert {"FEATURE_LEVELS", "D3D12_OPTIONS", "D3D12_OPTIONS1", "D3D12_OPTIONS4"} <= set(device.d3d12_queries)
    assert abi.IIDS["ID3D12Device5"] in device.interfaces


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{j.operator}-{i}" for i, (j, _) in enumerate(CASES)])
def test_create_operator_validates(judged, index: int) -> None:  # type: ignore[no-untyped-def]
    _, results = judged
    job, accepted = CASES[index]
    got = results[index]
    assert isinstance(got, int), got
    assert (got >= 0) == accepted, f"{job.operator}: {abi.hresult_text(got)}"
    if not accepted:
        assert got == abi.E_INVALIDARG


def test_validate_command_on_a_few_specs(libs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out, page = tmp_path / "out", tmp_path / "page.md"
    result = CliRunner().invoke(main, ["validate", "--op", "ACTIVATION_SOFTSIGN", "--op", "ELEMENT_WISE_CLIP1",
                                       "--op", "ACTIVATION_SWISH", "-o", str(out), "--markdown", str(page)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["totals"]["specs"] == 3 and report["totals"]["checked"] == 3
    assert report["totals"]["disagreements"] == 0
    assert report["device"]["advertised"] == CAPS
    softsign = report["configurations"]["ACTIVATION_SOFTSIGN"]
    assert any(c["doc"] == "unsupported" and c["library"].startswith("rejected: E_INVALIDARG") for c in softsign)
    assert page.read_text().startswith("# DirectML library vs. the docs' tensor-support tables")
    again = tmp_path / "again.md"
    result = CliRunner().invoke(main, ["validate", "--from-report", str(out / "report.json"), "--markdown", str(again)])
    assert result.exit_code == 0 and again.read_text() == page.read_text()


def test_validate_checks_operators_the_generic_desc_did_not_fit(libs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["validate", "--op", "MAX_POOLING", "--op", "GRU", "-o", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert {o["operator"]: o["status"] for o in report["operators"]} == {"GRU": "checked", "MAX_POOLING": "checked"}
    assert all(c["library"] == "accepted" for op in ("GRU", "MAX_POOLING")
               for c in report["configurations"][op] if c["doc"] == "supported")
