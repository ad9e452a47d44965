"""IDMLDevice::CreateOperator as a desc validator, in a subprocess.

DESIGN.md, "Backends": the real Linux libdirectml.so validates operator descs
here without a GPU.  It loads only when its folder (and the fake
libdxcore.so's) is on LD_LIBRARY_PATH before the process starts, and a
library crash must cost one desc, not the run; so the parent (`validate_descs`)
starts ``python -m dmlconform.backends.directml.desc_worker`` with that
environment, sends one JSON job on stdin and reads one JSON line per desc.
If the worker dies, the desc it was on is recorded as a crash and a new
worker goes on with the next one.

The worker creates the device on a `FakeD3D12Device` with
``DMLCreateDevice1`` at feature level 1_0, asks the library its highest
feature level and per-data-type support, tries ``DMLCreateDevice1`` at every
level, then calls CreateOperator for each desc and answers its HRESULT.  It
never calls CompileOperator (the stub D3D12 cannot compile anything).
"""

from __future__ import annotations

import ctypes as C
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dmlconform.backends.directml import abi
from dmlconform.backends.directml.com import Convention
from dmlconform.backends.directml.descs import DescError, NestedOp, TensorLayout, build
from dmlconform.backends.directml.fake_device import Capabilities, FakeD3D12Device
from dmlconform.backends.directml.library import Unavailable, ValidatorLibs
from dmlconform.catalog import load_spec
from dmlconform.spec.model import DataType, FeatureLevel

CRASHED = "crash"


@dataclass(frozen=True, slots=True)
class DescJob:
    """One desc to validate: the operator, its tensors (name -> [dtype, sizes]
    or a list of those for a tensor array, None for an absent optional) and
    attributes (a nested desc is ``{"op": NAME}``)."""

    operator: str
    tensors: Mapping[str, Any]
    attributes: Mapping[str, Any]
    dtype: str
    type_number: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {"op": self.operator, "tensors": dict(self.tensors), "attributes": dict(self.attributes),
                "dtype": self.dtype, "type": self.type_number}


@dataclass(frozen=True, slots=True)
class DeviceReport:
    """What the library said about the fake device."""

    created: str                     # DMLCreateDevice1 HRESULT text
    max_level: str | None            # "6_2"
    levels: tuple[tuple[str, str], ...]       # (level, HRESULT of DMLCreateDevice1 at it)
    dtypes: tuple[tuple[str, bool], ...]      # DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT answers
    d3d12_queries: tuple[str, ...]   # CheckFeatureSupport features the library asked the device for
    interfaces: tuple[str, ...]      # IIDs it QueryInterfaced


# ------------------------------------------------------------------ parent side
def validate_descs(libs: ValidatorLibs, specs: Mapping[str, Path], jobs: Sequence[DescJob], *,
                   caps: Mapping[str, Any], timeout: float = 600.0) -> tuple[DeviceReport, list[int | str]]:
    """The device report and one result per job: the HRESULT (int),
    ``"crash"``, or ``"not built: ..."`` (the desc could not be built from
    the values given).  Restarts the worker after a crash."""
    results: list[int | str] = []
    device: DeviceReport | None = None
    while len(results) < len(jobs) or device is None:
        start = len(results)
        header, answers, died = _run_worker(libs, specs, jobs[start:], caps, timeout)
        device = device or header
        results.extend(answers)
        if died is not None:
            if device is None:
                raise Unavailable(f"the validator process failed before creating the device: {died}")
            if len(results) < len(jobs):
                results.append(CRASHED)
    return device, results


def _run_worker(libs: ValidatorLibs, specs: Mapping[str, Path], jobs: Sequence[DescJob], caps: Mapping[str, Any],
                timeout: float) -> tuple[DeviceReport | None, list[int | str], str | None]:
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(
        p for p in (libs.ld_library_path(), os.environ.get("LD_LIBRARY_PATH", "")) if p))
    job = {"dml": str(libs.dml), "caps": dict(caps), "specs": {k: str(v) for k, v in specs.items()},
           "jobs": [j.as_json() for j in jobs]}
    try:
        done = subprocess.run([sys.executable, "-m", "dmlconform.backends.directml.desc_worker"], input=json.dumps(job),
                              capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, [], f"timed out after {timeout:.0f} s"
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    header = _device_report(lines[0]) if lines and "device" in lines[0] else None
    answers = [f"not built: {x['error']}" if "error" in x else int(x["hr"]) for x in lines[1:] if "hr" in x]
    if done.returncode != 0 or header is None:
        err = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return header, answers, err
    return header, answers, None


def _device_report(line: Mapping[str, Any]) -> DeviceReport:
    d = line["device"]
    return DeviceReport(d["created"], d.get("max_level"), tuple((k, v) for k, v in d.get("levels", [])),
                        tuple((k, bool(v)) for k, v in d.get("dtypes", [])), tuple(d.get("queries", ())),
                        tuple(d.get("interfaces", ())))


# ------------------------------------------------------------------ worker side
class _Device:
    """An IDMLDevice on the fake D3D12 device (worker process only)."""

    def __init__(self, dml_path: str, caps: Mapping[str, Any]) -> None:
        self.conv = Convention(windows=False)
        self.lib = C.CDLL(dml_path)
        flags: dict[str, Any] = {k: bool(caps[k]) for k in ("fp16", "int64", "fp64") if k in caps}
        self.fake = FakeD3D12Device(Capabilities(**flags))
        self.create = self.lib.DMLCreateDevice1
        self.create.restype = C.c_int32
        self.create.argtypes = [C.c_void_p, C.c_int32, C.c_int32, C.POINTER(abi.Guid), C.POINTER(C.c_void_p)]
        self.device = C.c_void_p()
        self.hr = self.create(self.fake.pointer, abi.CreateDeviceFlags.NONE, 0x1000, C.byref(abi.iid("IDMLDevice")),
                              C.byref(self.device))

    def feature(self, feature: int, query: C.Structure, data: C.Structure) -> int:
        return self.conv.call(self.device.value or 0, abi.IDMLDevice.CheckFeatureSupport, C.c_int32,
                              (C.c_int32, C.c_uint32, C.c_void_p, C.c_uint32, C.c_void_p), feature,
                              C.sizeof(query), C.addressof(query), C.sizeof(data), C.addressof(data))

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {"created": abi.hresult_text(self.hr), "queries": list(self.fake.queries),
                               "interfaces": list(self.fake.interfaces)}
        if self.hr < 0:
            return out
        levels = (C.c_int32 * len(FeatureLevel))(*[lv.value for lv in FeatureLevel])
        query = abi.DML_FEATURE_QUERY_FEATURE_LEVELS(len(FeatureLevel), C.addressof(levels))
        data = abi.DML_FEATURE_DATA_FEATURE_LEVELS()
        if self.feature(abi.DmlFeature.FEATURE_LEVELS, query, data) >= 0:
            out["max_level"] = FeatureLevel(data.MaxSupportedFeatureLevel).short
        out["dtypes"] = []
        for dtype in DataType:
            q, d = abi.DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT(dtype.value), abi.DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT()
            out["dtypes"].append([dtype.name, self.feature(abi.DmlFeature.TENSOR_DATA_TYPE_SUPPORT, q, d) >= 0
                                  and bool(d.IsSupported)])
        out["levels"] = [[lv.short, self._try_level(lv.value)] for lv in FeatureLevel]
        return out

    def _try_level(self, level: int) -> str:
        other = C.c_void_p()
        hr = self.create(self.fake.pointer, 0, level, C.byref(abi.iid("IDMLDevice")), C.byref(other))
        self.conv.release(other.value or 0)
        return abi.hresult_text(hr)

    def create_operator(self, desc: Any) -> int:
        op = C.c_void_p()
        hr = self.conv.call(self.device.value or 0, abi.IDMLDevice.CreateOperator, C.c_int32,
                            (C.c_void_p, C.POINTER(abi.Guid), C.POINTER(C.c_void_p)), desc,
                            C.byref(abi.iid("IDMLOperator")), C.byref(op))
        self.conv.release(op.value or 0)
        return int(hr)


def _jobs(job: Mapping[str, Any]) -> Iterator[tuple[Any, Any]]:
    """(BuiltDesc, None) per job, or (None, error text) where it cannot be built."""

    specs: dict[str, Any] = {}

    def spec(name: str) -> Any:
        if name not in specs:
            specs[name] = load_spec(Path(job["specs"][name]))
        return specs[name]

    def layout(value: Any) -> Any:
        if value is None:
            return None
        if value and isinstance(value[0], list):
            return tuple(TensorLayout(DataType[v[0]], tuple(v[1])) for v in value)
        return TensorLayout(DataType[value[0]], tuple(value[1]))

    def attribute(value: Any) -> Any:
        if isinstance(value, dict) and "op" in value:
            return NestedOp(spec(value["op"]))
        if isinstance(value, list) and value and isinstance(value[0], dict):
            return tuple(attribute(v) for v in value)
        return value

    for item in job["jobs"]:
        try:
            built = build(spec(item["op"]), {k: layout(v) for k, v in item["tensors"].items()},
                          {k: attribute(v) for k, v in item["attributes"].items()},
                          dtype=DataType[item["dtype"]], type_number=item.get("type"))
            yield built, None
        except (DescError, KeyError, ValueError, TypeError) as exc:
            yield None, f"{type(exc).__name__}: {exc}"


def worker(stdin: Any, stdout: Any) -> int:
    job = json.load(stdin)
    device = _Device(job["dml"], job.get("caps", {}))
    stdout.write(json.dumps({"device": device.report()}) + "\n")
    stdout.flush()
    if device.hr < 0:
        return 1
    for built, error in _jobs(job):
        hr = abi.E_INVALIDARG if built is None else device.create_operator(built.pointer())
        stdout.write(json.dumps({"hr": hr, **({"error": error} if error else {})}) + "\n")
        stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(worker(sys.stdin, sys.stdout))
