"""Running one operator on a GPU through D3D12 and DirectML.

DESIGN.md, "Backends".  The call sequence of com.md §8: D3D12CreateDevice,
DMLCreateDevice1 at the requested feature level, then per operator:
CreateOperator, CompileOperator, CreateOperatorInitializer, the binding
properties of both, a shader-visible descriptor heap, default-heap buffers
(UAV) for every tensor, temporary and persistent buffers, an upload buffer per
input and a readback buffer per output, binding tables, RecordDispatch of
the initializer then of the operator, ExecuteCommandLists, a fence wait, and
Map of the readback buffers.  An in-place output is bound to its input's
buffer (one resource bound twice).

Only a Windows machine or WSL2 with a GPU runs this for real; the tests drive
every step through a fake COM layer (Python objects behind ctypes vtables),
including a failing HRESULT at each step.
"""

from __future__ import annotations

import ctypes as C
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dmlconform.backends.directml import abi
from dmlconform.backends.directml.com import ComError, Convention, Owned, check

PP = C.POINTER(C.c_void_p)
REFIID = C.POINTER(abi.Guid)


@dataclass(frozen=True, slots=True)
class Entry:
    """The two exported functions the session needs, already typed."""

    d3d12_create_device: Callable[..., int]   # (adapter, D3D_FEATURE_LEVEL, REFIID, void**)
    dml_create_device1: Callable[..., int]    # (device, flags, DML_FEATURE_LEVEL, REFIID, void**)


@dataclass(frozen=True, slots=True)
class TensorIO:
    """One bound tensor: ``data`` (input bytes, or None for an output),
    ``size`` its buffer in bytes (TotalTensorSizeInBytes), ``alias`` the
    index of the input whose buffer an in-place output shares."""

    data: bytes | None
    size: int
    alias: int | None = None


def _align(n: int, to: int) -> int:
    return (n + to - 1) // to * to


class Session:
    """An IDMLDevice with its queue, allocator, command list, fence and
    recorder; `run` executes one operator desc.  Close with `close`."""

    def __init__(self, entry: Entry, conv: Convention, level: int) -> None:
        self.conv, self.owned = conv, Owned(conv)
        self.fence_value = 0
        try:
            self._open(entry, level)
        except BaseException:
            self.close()
            raise

    def _out(self, step: str, fn: Callable[..., int], *args: Any) -> int:
        """Call ``fn(*args, &out)``; own and return ``out``."""
        out = C.c_void_p()
        check(fn(*args, C.byref(out)), step)
        return self.owned.add(out)

    def _open(self, entry: Entry, level: int) -> None:
        d12 = None
        for fl in (abi.D3DFeatureLevel.FL_11_0, abi.D3DFeatureLevel.FL_1_0_CORE):
            try:
                d12 = self._out("D3D12CreateDevice", entry.d3d12_create_device, None, int(fl),
                                C.byref(abi.iid("ID3D12Device")))
                break
            except ComError:
                if fl is abi.D3DFeatureLevel.FL_1_0_CORE:
                    raise
        self.d3d12 = d12 or 0
        self.dml = self._out("DMLCreateDevice1", entry.dml_create_device1, self.d3d12, abi.CreateDeviceFlags.NONE,
                             level, C.byref(abi.iid("IDMLDevice")))
        queue_desc = abi.D3D12_COMMAND_QUEUE_DESC(abi.CommandListType.DIRECT, 0, 0, 0)
        dev = self.d3d12
        self.queue = self._owned_out(self.owned, dev, abi.ID3D12Device.CreateCommandQueue, "ID3D12Device::CreateCommandQueue",
                                      (C.c_void_p, REFIID), C.addressof(queue_desc),
                                      C.byref(abi.iid("ID3D12CommandQueue")))
        self.allocator = self._owned_out(self.owned, dev, abi.ID3D12Device.CreateCommandAllocator,
                                          "ID3D12Device::CreateCommandAllocator", (C.c_int32, REFIID),
                                          abi.CommandListType.DIRECT, C.byref(abi.iid("ID3D12CommandAllocator")))
        self.list = self._owned_out(self.owned, dev, abi.ID3D12Device.CreateCommandList, "ID3D12Device::CreateCommandList",
                                     (C.c_uint32, C.c_int32, C.c_void_p, C.c_void_p, REFIID), 0,
                                     abi.CommandListType.DIRECT, self.allocator, None,
                                     C.byref(abi.iid("ID3D12GraphicsCommandList")))
        self.conv.hr(self.list, abi.ID3D12GraphicsCommandList.Close, "ID3D12GraphicsCommandList::Close", ())
        self.fence = self._owned_out(self.owned, dev, abi.ID3D12Device.CreateFence, "ID3D12Device::CreateFence",
                                      (C.c_uint64, C.c_int32, REFIID), 0, abi.FenceFlags.NONE,
                                      C.byref(abi.iid("ID3D12Fence")))
        self.recorder = self._owned_out(self.owned, self.dml, abi.IDMLDevice.CreateCommandRecorder,
                                         "IDMLDevice::CreateCommandRecorder", (REFIID,),
                                         C.byref(abi.iid("IDMLCommandRecorder")))

    def close(self) -> None:
        self.owned.__exit__(None, None, None)

    def removed_reason(self) -> int:
        """ID3D12Device::GetDeviceRemovedReason: S_OK while the device works."""
        return int(self.conv.call(self.d3d12, abi.ID3D12Device.GetDeviceRemovedReason, C.c_int32, ()))

    def dml_removed_reason(self) -> int:
        """IDMLDevice::GetDeviceRemovedReason: S_OK while it works; else why
        DirectML removed it (a failed RecordDispatch, which returns nothing,
        removes the DirectML device and leaves its HRESULT here)."""
        return int(self.conv.call(self.dml, abi.IDMLDevice.GetDeviceRemovedReason, C.c_int32, ()))

    # ------------------------------------------------------------ one operator
    def create_operator(self, desc: Any, owned: Owned) -> int:
        out = C.c_void_p()
        self.conv.hr(self.dml, abi.IDMLDevice.CreateOperator, "IDMLDevice::CreateOperator", (C.c_void_p, REFIID, PP),
                     desc, C.byref(abi.iid("IDMLOperator")), C.byref(out))
        return owned.add(out)

    def run(self, desc: Any, inputs: Sequence[TensorIO], outputs: Sequence[TensorIO]) -> list[bytes]:
        """Execute the operator of ``desc`` (a pointer to DML_OPERATOR_DESC)
        on ``inputs``/``outputs`` in desc order (an absent optional input has
        ``size`` 0); the bytes of each output."""
        conv = self.conv
        with Owned(conv) as owned:
            op = self.create_operator(desc, owned)
            compiled = self._owned_out(owned, self.dml, abi.IDMLDevice.CompileOperator, "IDMLDevice::CompileOperator",
                                       (C.c_void_p, C.c_int32, REFIID), op, abi.ExecutionFlags.NONE,
                                       C.byref(abi.iid("IDMLCompiledOperator")))
            ops = (C.c_void_p * 1)(compiled)
            init = self._owned_out(owned, self.dml, abi.IDMLDevice.CreateOperatorInitializer,
                                   "IDMLDevice::CreateOperatorInitializer", (C.c_uint32, C.c_void_p, REFIID), 1,
                                   C.addressof(ops), C.byref(abi.iid("IDMLOperatorInitializer")))
            exec_props = conv.struct(compiled, abi.IDMLDispatchable.GetBindingProperties, abi.DML_BINDING_PROPERTIES)
            init_props = conv.struct(init, abi.IDMLDispatchable.GetBindingProperties, abi.DML_BINDING_PROPERTIES)
            count = max(exec_props.RequiredDescriptorCount, init_props.RequiredDescriptorCount, 1)
            heap_desc = abi.D3D12_DESCRIPTOR_HEAP_DESC(abi.DescriptorHeapType.CBV_SRV_UAV, count,
                                                       abi.DescriptorHeapFlags.SHADER_VISIBLE, 0)
            heap = self._owned_out(owned, self.d3d12, abi.ID3D12Device.CreateDescriptorHeap,
                                   "ID3D12Device::CreateDescriptorHeap", (C.c_void_p, REFIID),
                                   C.addressof(heap_desc), C.byref(abi.iid("ID3D12DescriptorHeap")))
            cpu = conv.struct(heap, abi.ID3D12DescriptorHeap.GetCPUDescriptorHandleForHeapStart,
                              abi.D3D12_CPU_DESCRIPTOR_HANDLE)
            gpu = conv.struct(heap, abi.ID3D12DescriptorHeap.GetGPUDescriptorHandleForHeapStart,
                              abi.D3D12_GPU_DESCRIPTOR_HANDLE)
            temp_size = max(exec_props.TemporaryResourceSize, init_props.TemporaryResourceSize)
            temp = self.buffer(owned, temp_size, abi.HeapType.DEFAULT) if temp_size else 0
            persistent_size = exec_props.PersistentResourceSize
            persistent = self.buffer(owned, persistent_size, abi.HeapType.DEFAULT) if persistent_size else 0
            table_desc = abi.DML_BINDING_TABLE_DESC(init, cpu, gpu, count)
            table = self._owned_out(owned, self.dml, abi.IDMLDevice.CreateBindingTable,
                                    "IDMLDevice::CreateBindingTable", (C.c_void_p, REFIID),
                                    C.addressof(table_desc), C.byref(abi.iid("IDMLBindingTable")))
            defaults, uploads = self.tensor_buffers(owned, inputs, outputs)
            # A temporary resource is bound only to the dispatchable that asks for one: DirectML
            # refuses one bound to an initializer that needs none at RecordDispatch, which reports
            # it by removing its device (REDUCE, SOFTMAX, TOP_K ... on vkd3d, issue #37).
            exec_temp = temp if exec_props.TemporaryResourceSize else 0
            self.record_initializer(init, table, heap, temp, temp_size, persistent, persistent_size, uploads,
                                    defaults, inputs, bind_temp=bool(init_props.TemporaryResourceSize))
            table_desc.Dispatchable = compiled
            conv.hr(table, abi.IDMLBindingTable.Reset, "IDMLBindingTable::Reset", (C.c_void_p,),
                    C.addressof(table_desc))
            self.bind(table, defaults, inputs, outputs, exec_temp, temp_size, persistent, persistent_size)
            readbacks = [self.buffer(owned, t.size, abi.HeapType.READBACK) if t.size else 0 for t in outputs]
            self.record_dispatch(compiled, table, heap, defaults, outputs, readbacks, len(inputs))
            return [self.read(rb, t.size) for rb, t in zip(readbacks, outputs) if t.size]

    def _owned_out(self, owned: Owned, this: int, slot: int, step: str, argtypes: tuple[Any, ...], *args: Any) -> int:
        out = C.c_void_p()
        self.conv.hr(this, slot, step, (*argtypes, PP), *args, C.byref(out))
        return owned.add(out)

    def buffer(self, owned: Owned, size: int, heap: abi.HeapType) -> int:
        """A committed buffer: default heap (UAV, state COMMON), upload (GENERIC_READ) or readback (COPY_DEST)."""
        props = abi.D3D12_HEAP_PROPERTIES(heap, 0, 0, 1, 1)
        uav = heap is abi.HeapType.DEFAULT
        desc = abi.D3D12_RESOURCE_DESC(abi.ResourceDimension.BUFFER, 0, _align(max(size, 4), 4), 1, 1, 1, 0,
                                       abi.DXGI_SAMPLE_DESC(1, 0), abi.TextureLayout.ROW_MAJOR,
                                       abi.ResourceFlags.ALLOW_UNORDERED_ACCESS if uav else abi.ResourceFlags.NONE)
        state = {abi.HeapType.DEFAULT: abi.ResourceState.COMMON, abi.HeapType.UPLOAD: abi.ResourceState.GENERIC_READ,
                 abi.HeapType.READBACK: abi.ResourceState.COPY_DEST}[heap]
        return self._owned_out(owned, self.d3d12, abi.ID3D12Device.CreateCommittedResource,
                               "ID3D12Device::CreateCommittedResource",
                               (C.c_void_p, C.c_int32, C.c_void_p, C.c_int32, C.c_void_p, REFIID), C.addressof(props),
                               0, C.addressof(desc), state, None, C.byref(abi.iid("ID3D12Resource")))

    def tensor_buffers(self, owned: Owned, inputs: Sequence[TensorIO],
                       outputs: Sequence[TensorIO]) -> tuple[list[int], list[int]]:
        """Default buffers (inputs then outputs; an alias reuses its input's)
        and an upload buffer per input, filled by Map/memcpy/Unmap."""
        defaults = [self.buffer(owned, t.size, abi.HeapType.DEFAULT) if t.size else 0 for t in inputs]
        defaults += [defaults[t.alias] if t.alias is not None
                     else self.buffer(owned, t.size, abi.HeapType.DEFAULT) if t.size else 0 for t in outputs]
        uploads = []
        for t in inputs:
            upload = self.buffer(owned, t.size, abi.HeapType.UPLOAD) if t.size else 0
            if upload and t.data:
                self.write(upload, t.data)
            uploads.append(upload)
        return defaults, uploads

    def write(self, resource: int, data: bytes) -> None:
        ptr = C.c_void_p()
        empty = abi.D3D12_RANGE(0, 0)
        self.conv.hr(resource, abi.ID3D12Resource.Map, "ID3D12Resource::Map", (C.c_uint32, C.c_void_p, PP), 0,
                     C.addressof(empty), C.byref(ptr))
        C.memmove(ptr, data, len(data))
        self.conv.call(resource, abi.ID3D12Resource.Unmap, None, (C.c_uint32, C.c_void_p), 0, None)

    def read(self, resource: int, size: int) -> bytes:
        ptr = C.c_void_p()
        whole = abi.D3D12_RANGE(0, size)
        self.conv.hr(resource, abi.ID3D12Resource.Map, "ID3D12Resource::Map", (C.c_uint32, C.c_void_p, PP), 0,
                     C.addressof(whole), C.byref(ptr))
        data = C.string_at(ptr, size)
        empty = abi.D3D12_RANGE(0, 0)
        self.conv.call(resource, abi.ID3D12Resource.Unmap, None, (C.c_uint32, C.c_void_p), 0, C.addressof(empty))
        return data

    # ------------------------------------------------------------ recording
    def barriers(self, items: Sequence[tuple[int, int, int]]) -> None:
        """Transition barriers (resource, before, after); (0, 0, 0) is a UAV barrier on all resources."""
        if not items:
            return
        arr = (abi.D3D12_RESOURCE_BARRIER * len(items))()
        for b, (res, before, after) in zip(arr, items):
            if res == 0:
                b.Type = abi.BarrierType.UAV
            else:
                b.Type = abi.BarrierType.TRANSITION
                b.Transition = abi.D3D12_RESOURCE_TRANSITION_BARRIER(res, abi.ALL_SUBRESOURCES, before, after)
        self.conv.call(self.list, abi.ID3D12GraphicsCommandList.ResourceBarrier, None, (C.c_uint32, C.c_void_p),
                       len(items), C.addressof(arr))

    def begin(self, heap: int) -> None:
        conv = self.conv
        conv.hr(self.allocator, abi.ID3D12CommandAllocator.Reset, "ID3D12CommandAllocator::Reset", ())
        conv.hr(self.list, abi.ID3D12GraphicsCommandList.Reset, "ID3D12GraphicsCommandList::Reset",
                (C.c_void_p, C.c_void_p), self.allocator, None)
        heaps = (C.c_void_p * 1)(heap)
        conv.call(self.list, abi.ID3D12GraphicsCommandList.SetDescriptorHeaps, None, (C.c_uint32, C.c_void_p), 1,
                  C.addressof(heaps))

    def dispatch(self, dispatchable: int, table: int) -> None:
        self.conv.call(self.recorder, abi.IDMLCommandRecorder.RecordDispatch, None,
                       (C.c_void_p, C.c_void_p, C.c_void_p), self.list, dispatchable, table)

    def copy(self, dst: int, src: int, size: int) -> None:
        self.conv.call(self.list, abi.ID3D12GraphicsCommandList.CopyBufferRegion, None,
                       (C.c_void_p, C.c_uint64, C.c_void_p, C.c_uint64, C.c_uint64), dst, 0, src, 0, size)

    def submit(self) -> None:
        """Close, execute, signal and wait (SetEventOnCompletion with a NULL event blocks)."""
        conv = self.conv
        conv.hr(self.list, abi.ID3D12GraphicsCommandList.Close, "ID3D12GraphicsCommandList::Close", ())
        lists = (C.c_void_p * 1)(self.list)
        conv.call(self.queue, abi.ID3D12CommandQueue.ExecuteCommandLists, None, (C.c_uint32, C.c_void_p), 1,
                  C.addressof(lists))
        self.fence_value += 1
        conv.hr(self.queue, abi.ID3D12CommandQueue.Signal, "ID3D12CommandQueue::Signal", (C.c_void_p, C.c_uint64),
                self.fence, self.fence_value)
        conv.hr(self.fence, abi.ID3D12Fence.SetEventOnCompletion, "ID3D12Fence::SetEventOnCompletion",
                (C.c_uint64, C.c_void_p), self.fence_value, None)
        done = conv.call(self.fence, abi.ID3D12Fence.GetCompletedValue, C.c_uint64, ())
        if done < self.fence_value:
            reason = self.removed_reason()
            raise ComError("ID3D12Fence::GetCompletedValue", reason or abi.E_FAIL,
                           f"fence at {done}, expected {self.fence_value}: the device was removed or hung")

    def record_initializer(self, init: int, table: int, heap: int, temp: int, temp_size: int, persistent: int,
                           persistent_size: int, uploads: Sequence[int], defaults: Sequence[int],
                           inputs: Sequence[TensorIO], *, bind_temp: bool = True) -> None:
        """Upload the inputs, put every other buffer in UNORDERED_ACCESS and
        initialize the operator (persistent buffer as the initializer's output)."""
        keep = self.bind_one(table, abi.IDMLBindingTable.BindTemporaryResource, temp if bind_temp else 0, temp_size)
        if persistent:
            binding = abi.DML_BUFFER_BINDING(persistent, 0, persistent_size)
            desc = abi.DML_BINDING_DESC(abi.BindingType.BUFFER, C.addressof(binding))
            self.conv.call(table, abi.IDMLBindingTable.BindOutputs, None, (C.c_uint32, C.c_void_p), 1,
                           C.addressof(desc))
            keep.extend((binding, desc))
        self.begin(heap)
        pairs = [(u, d, t.size) for u, d, t in zip(uploads, defaults, inputs) if u]
        uploaded = {d for _, d, _ in pairs}
        others = dict.fromkeys(r for r in (*defaults[len(inputs):], temp, persistent) if r and r not in uploaded)
        self.barriers([(d, abi.ResourceState.COMMON, abi.ResourceState.COPY_DEST) for _, d, _ in pairs])
        for u, d, size in pairs:
            self.copy(d, u, _align(size, 4))
        self.barriers([(d, abi.ResourceState.COPY_DEST, abi.ResourceState.UNORDERED_ACCESS) for _, d, _ in pairs]
                      + [(r, abi.ResourceState.COMMON, abi.ResourceState.UNORDERED_ACCESS) for r in others])
        self.dispatch(init, table)
        self.submit()

    def bind_one(self, table: int, slot: int, resource: int, size: int) -> list[Any]:
        if not resource:
            return []
        binding = abi.DML_BUFFER_BINDING(resource, 0, size)
        desc = abi.DML_BINDING_DESC(abi.BindingType.BUFFER, C.addressof(binding))
        self.conv.call(table, slot, None, (C.c_void_p,), C.addressof(desc))
        return [binding, desc]

    def bind(self, table: int, defaults: Sequence[int], inputs: Sequence[TensorIO], outputs: Sequence[TensorIO],
             temp: int, temp_size: int, persistent: int, persistent_size: int) -> None:
        """Inputs and outputs in desc order (BINDING_TYPE_NONE for an absent optional tensor)."""
        tensors = [*inputs, *outputs]
        bindings = (abi.DML_BUFFER_BINDING * max(len(tensors), 1))()
        descs = (abi.DML_BINDING_DESC * max(len(tensors), 1))()
        for i, (t, res) in enumerate(zip(tensors, defaults)):
            bindings[i] = abi.DML_BUFFER_BINDING(res, 0, _align(t.size, 4))
            descs[i] = abi.DML_BINDING_DESC(abi.BindingType.BUFFER if res else abi.BindingType.NONE,
                                            C.addressof(bindings[i]) if res else None)
        size = C.sizeof(abi.DML_BINDING_DESC)
        self.conv.call(table, abi.IDMLBindingTable.BindInputs, None, (C.c_uint32, C.c_void_p), len(inputs),
                       C.addressof(descs))
        self.conv.call(table, abi.IDMLBindingTable.BindOutputs, None, (C.c_uint32, C.c_void_p), len(outputs),
                       C.addressof(descs) + size * len(inputs))
        self.bind_one(table, abi.IDMLBindingTable.BindTemporaryResource, temp, temp_size)
        self.bind_one(table, abi.IDMLBindingTable.BindPersistentResource, persistent, persistent_size)

    def record_dispatch(self, compiled: int, table: int, heap: int, defaults: Sequence[int],
                        outputs: Sequence[TensorIO], readbacks: Sequence[int], n_inputs: int) -> None:
        """Dispatch the operator, then copy each output to its readback buffer."""
        self.begin(heap)
        self.dispatch(compiled, table)
        self.barriers([(0, 0, 0)])
        outs = defaults[n_inputs:]
        self.barriers([(d, abi.ResourceState.UNORDERED_ACCESS, abi.ResourceState.COPY_SOURCE)
                       for d in dict.fromkeys(outs) if d])
        for d, rb, t in zip(outs, readbacks, outputs):
            if d:  # an absent optional output is bound as NONE and read back as nothing
                self.copy(rb, d, _align(t.size, 4))
        self.submit()
