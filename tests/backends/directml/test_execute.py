"""Tier (b): the whole execute path through a fake COM layer, on both calling conventions."""

from __future__ import annotations

import numpy as np
import pytest

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.directml import abi
from dmlconform.backends.directml.backend import DirectMLBackend
from dmlconform.backends.directml.com import ComError, Convention, DeviceRemovedError
from dmlconform.cases.model import Layout
from dmlconform.families.elementwise.cases import generate
from dmlconform.spec.model import DataType, FeatureLevel
from tests.backends.directml.conftest import spec
from tests.backends.directml.fake_com import FakeCom

CONVENTIONS = [pytest.param(False, id="sysv"), pytest.param(True, id="windows")]

#: The execute path in order (a subsequence of the recorded calls).
SEQUENCE = [
    "D3D12CreateDevice", "DMLCreateDevice1", "ID3D12Device::CreateCommandQueue", "ID3D12Device::CreateCommandAllocator",
    "ID3D12Device::CreateCommandList", "ID3D12Device::CreateFence", "IDMLDevice::CreateCommandRecorder",
    "IDMLDevice::CheckFeatureSupport", "IDMLDevice::CreateOperator", "IDMLDevice::CompileOperator",
    "IDMLDevice::CreateOperatorInitializer", "IDMLCompiledOperator::GetBindingProperties",
    "IDMLOperatorInitializer::GetBindingProperties", "ID3D12Device::CreateDescriptorHeap",
    "ID3D12DescriptorHeap::GetCPUDescriptorHandleForHeapStart", "ID3D12DescriptorHeap::GetGPUDescriptorHandleForHeapStart",
    "ID3D12Device::CreateCommittedResource", "IDMLDevice::CreateBindingTable", "ID3D12Resource::Map",
    "ID3D12Resource::Unmap", "IDMLBindingTable::BindTemporaryResource", "IDMLBindingTable::BindOutputs",
    "ID3D12CommandAllocator::Reset", "ID3D12GraphicsCommandList::Reset", "ID3D12GraphicsCommandList::SetDescriptorHeaps",
    "ID3D12GraphicsCommandList::ResourceBarrier", "ID3D12GraphicsCommandList::CopyBufferRegion",
    "IDMLCommandRecorder::RecordDispatch", "ID3D12GraphicsCommandList::Close", "ID3D12CommandQueue::ExecuteCommandLists",
    "ID3D12CommandQueue::Signal", "ID3D12Fence::SetEventOnCompletion", "ID3D12Fence::GetCompletedValue",
    "IDMLBindingTable::Reset", "IDMLBindingTable::BindInputs", "IDMLBindingTable::BindOutputs",
    "IDMLBindingTable::BindPersistentResource", "IDMLCommandRecorder::RecordDispatch",
    "ID3D12GraphicsCommandList::CopyBufferRegion", "ID3D12CommandQueue::ExecuteCommandLists", "ID3D12Resource::Map",
]


def _backend(com: FakeCom) -> DirectMLBackend:
    return DirectMLBackend.with_entry(com.entry, Convention(windows=com.windows))


def _softsign_cases(layout: Layout | None = None):  # type: ignore[no-untyped-def]
    cases = [c for c in generate(spec("ACTIVATION_SOFTSIGN"), FeatureLevel.FL_6_2, seed=0)
             if c.dtype is DataType.FLOAT32 and c.expect_supported]
    return [c for c in cases if layout is None or c.layout is layout]


def _run(backend: DirectMLBackend, case):  # type: ignore[no-untyped-def]
    buffers = {t.name: np.array(t.buffer, copy=True) for t in case.inputs}
    for t in case.outputs:
        alias = dict(case.aliases).get(t.name)
        buffers[t.name] = buffers[alias] if alias else np.zeros_like(t.buffer)
    backend.run(spec(case.operator), case, buffers)
    return buffers


def _is_subsequence(wanted: list[str], calls: list[str]) -> bool:
    it = iter(calls)
    return all(step in it for step in wanted)


@pytest.mark.parametrize("windows", CONVENTIONS)
def test_softsign_end_to_end_every_layout(windows: bool) -> None:
    com = FakeCom(windows=windows)
    backend = _backend(com)
    info = backend.info()
    assert (info.available, info.feature_level) == (True, FeatureLevel.FL_6_2)
    cases = _softsign_cases()
    layouts = {c.layout for c in cases}
    assert {Layout.PACKED, Layout.PADDED, Layout.IN_PLACE} <= layouts
    for case in cases[:40] + [c for c in cases if c.layout is not Layout.PACKED][:20]:
        buffers = _run(backend, case)
        x = case.inputs[0].view(buffers["InputTensor"] if case.aliases else case.inputs[0].buffer)
        out = case.outputs[0]
        with np.errstate(all="ignore"):
            expected = (x / (1 + np.abs(x))).astype(np.float32) if not case.aliases else None
        got = out.view(buffers[out.name])
        if expected is not None:
            np.testing.assert_array_equal(got, expected, err_msg=case.id)
    assert com.errors == []
    assert _is_subsequence(SEQUENCE, com.calls), com.calls[:80]


def test_desc_strides_sizes_and_total_bytes_reach_the_library() -> None:
    com = FakeCom()
    backend = _backend(com)
    case = next(c for c in _softsign_cases(Layout.PADDED))
    _run(backend, case)
    x, out = com.operators[-1]["tensors"]
    assert (x["sizes"], x["strides"]) == (case.inputs[0].sizes, case.inputs[0].strides)
    assert x["dtype"] == DataType.FLOAT32.value
    assert x["bytes"] % 4 == 0 and x["bytes"] >= 4 * (1 + sum((s - 1) * st for s, st in zip(x["sizes"], x["strides"])))


def test_in_place_binds_one_buffer_twice() -> None:
    com = FakeCom()
    backend = _backend(com)
    case = next(c for c in _softsign_cases(Layout.IN_PLACE))
    before = np.array(case.inputs[0].buffer, copy=True)
    buffers = _run(backend, case)
    table = [o for o in com.objects.values() if o.interface == "IDMLBindingTable"][-1]
    bound = table.state["bound"]
    assert bound["inputs"][0][0] == bound["outputs"][0][0]
    view = case.inputs[0].view(before)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(case.outputs[0].view(buffers["OutputTensor"]), view / (1 + np.abs(view)))


def test_initializer_binds_persistent_as_output_and_heap_is_shader_visible() -> None:
    com = FakeCom(binding=(7, 0, 512))
    backend = _backend(com)
    _run(backend, _softsign_cases()[0])
    assert com.heap_desc == (abi.DescriptorHeapType.CBV_SRV_UAV, 7, abi.DescriptorHeapFlags.SHADER_VISIBLE)
    assert "IDMLBindingTable::BindTemporaryResource" not in com.calls  # no temporary buffer asked for
    resources = [o for o in com.objects.values() if o.interface == "ID3D12Resource"]
    heaps = sorted(o.state["heap"] for o in resources)
    assert heaps.count(abi.HeapType.UPLOAD) == 1 and heaps.count(abi.HeapType.READBACK) == 1
    uavs = [o for o in resources if o.state["heap"] == abi.HeapType.DEFAULT]
    assert all(o.state["flags"] == abi.ResourceFlags.ALLOW_UNORDERED_ACCESS for o in uavs)


def test_a_temporary_resource_is_bound_only_where_the_dispatchable_asks_for_one() -> None:
    """Issue #37: REDUCE, SOFTMAX, TOP_K ... need a temporary resource to execute and none to
    initialize; bound to their initializer anyway, DirectML removed its device at RecordDispatch."""
    com = FakeCom(binding=(4, 64, 0), init_binding=(4, 0, 0))
    _run(_backend(com), _softsign_cases()[0])
    tables = [o for o in com.objects.values() if o.interface == "IDMLBindingTable"]
    assert len(tables) == 1
    bound = tables[0].state["bound"]
    assert bound["temporary"][0] is not None and bound["temporary"][0][2] >= 64  # the execute's, after Reset
    calls = [c for c in com.calls if c.startswith(("IDMLBindingTable::", "IDMLCommandRecorder::"))]
    first_dispatch = calls.index("IDMLCommandRecorder::RecordDispatch")
    assert "IDMLBindingTable::BindTemporaryResource" not in calls[:first_dispatch]
    assert "IDMLBindingTable::BindTemporaryResource" in calls[first_dispatch:]


def test_everything_created_per_operator_is_released() -> None:
    com = FakeCom()
    backend = _backend(com)
    _run(backend, _softsign_cases()[0])
    per_op = ["IDMLOperator", "IDMLCompiledOperator", "IDMLOperatorInitializer", "ID3D12DescriptorHeap",
              "IDMLBindingTable"]
    for name in per_op:
        assert com.released.count(name) == 1, name


def test_two_input_operator_and_unknown_type() -> None:
    com = FakeCom()
    backend = _backend(com)
    add = next(c for c in generate(spec("ELEMENT_WISE_ADD"), FeatureLevel.FL_6_2, seed=0)
               if c.dtype is DataType.FLOAT32 and c.layout is Layout.BROADCAST)
    buffers = _run(backend, add)
    a, b = (t.view(t.buffer) for t in add.inputs)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(add.outputs[0].view(buffers["OutputTensor"]), np.broadcast_to(a + b, a.shape))
    shrink = next(c for c in generate(spec("ACTIVATION_SHRINK"), FeatureLevel.FL_6_2, seed=0))
    with pytest.raises(NotSupportedError, match=r"DirectML rejected the desc: IDMLDevice::CreateOperator failed "
                                                r"with E_INVALIDARG \(0x80070057\)"):
        _run(backend, shrink)


STEPS = [s for s in dict.fromkeys(SEQUENCE) if "::" in s and not s.endswith(
    ("GetBindingProperties", "HeapStart", "Unmap", "SetDescriptorHeaps", "ResourceBarrier", "CopyBufferRegion",
     "RecordDispatch", "ExecuteCommandLists", "BindTemporaryResource", "BindOutputs", "BindInputs",
     "BindPersistentResource", "GetCompletedValue"))]


@pytest.mark.parametrize("step", STEPS)
def test_failure_at_each_step_is_a_clear_error(step: str) -> None:
    com = FakeCom(fail={step: abi.E_FAIL if step != "IDMLDevice::CreateOperator" else -0x7785FFFB})
    backend = _backend(com)
    info = backend.info()
    probe = FakeCom()
    _backend(probe).info()
    if step in probe.calls:  # made while opening the device
        assert info.available is False and step in info.reason and "0x" in info.reason
        with pytest.raises(NotSupportedError, match="directml is unavailable"):
            _run(backend, _softsign_cases()[0])
        return
    with pytest.raises(ComError) as err:
        _run(backend, _softsign_cases()[0])
    assert err.value.step == step
    assert str(err.value).startswith(f"{step} failed with ")


@pytest.mark.parametrize("export", ["D3D12CreateDevice", "DMLCreateDevice1"])
def test_device_creation_failure_makes_the_backend_unavailable(export: str) -> None:
    com = FakeCom(fail={export: -0x7785FFFC})  # DXGI_ERROR_UNSUPPORTED
    info = _backend(com).info()
    assert not info.available
    assert info.reason.startswith(f"{export} failed with DXGI_ERROR_UNSUPPORTED (0x887A0004)")


def test_a_fence_that_never_completes_names_the_removed_device() -> None:
    com = FakeCom()
    backend = _backend(com)
    backend.info()
    fence = next(o for o in com.objects.values() if o.interface == "ID3D12Fence")
    com.fail["ID3D12Fence::GetCompletedValue"] = 0  # stays at 0
    com.fail["ID3D12Device::GetDeviceRemovedReason"] = DEVICE_REMOVED
    fence.state["value"] = 0
    with pytest.raises(ComError, match="DXGI_ERROR_DEVICE_REMOVED .*device was removed or hung"):
        _run(backend, _softsign_cases()[0])


DEVICE_REMOVED = -0x7785FFFB


@pytest.mark.parametrize(("step", "hresult", "reason"), [
    ("ID3D12Fence::GetCompletedValue", 0, DEVICE_REMOVED),           # the fence stops; the device says why
    ("IDMLDevice::CompileOperator", DEVICE_REMOVED, abi.S_OK),       # the call's own HRESULT says it
    ("ID3D12Device::CreateCommittedResource", -0x7785FFFA, DEVICE_REMOVED)])  # DEVICE_HUNG
def test_a_removed_device_costs_one_case_and_the_next_gets_a_new_device(step: str, hresult: int, reason: int) -> None:
    """Issue #37: HARDMAX and friends remove vkd3d's device; the case that did is that case's
    result (with the reason), and the next case runs on a new device, not on the removed one."""
    com = FakeCom()
    backend = _backend(com)
    backend.info()
    first, second = _softsign_cases()[:2]
    com.fail.update({step: hresult, "ID3D12Device::GetDeviceRemovedReason": reason})
    if step == "ID3D12Fence::GetCompletedValue":
        next(o for o in com.objects.values() if o.interface == "ID3D12Fence").state["value"] = 0
    with pytest.raises(DeviceRemovedError, match=f"^{step} failed with .*the device was removed.*"
                                                 "the next case runs on a new device") as err:
        _run(backend, first)
    assert err.value.step == step
    com.fail.clear()
    created = com.calls.count("D3D12CreateDevice")
    out = _run(backend, second)
    assert com.calls.count("D3D12CreateDevice") == created + 1
    x = second.inputs[0].buffer
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(out["OutputTensor"][: x.size], x / (1 + np.abs(x)), rtol=1e-6)


def test_a_failure_that_leaves_the_device_keeps_it() -> None:
    com = FakeCom(fail={"IDMLDevice::CompileOperator": abi.E_FAIL})
    backend = _backend(com)
    with pytest.raises(ComError) as err:
        _run(backend, _softsign_cases()[0])
    assert not isinstance(err.value, DeviceRemovedError)
    assert com.calls.count("D3D12CreateDevice") == 1
