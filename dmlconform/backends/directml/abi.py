"""The DirectML and D3D12 binary interface (x64) as ctypes: structs, enum
values, interface IDs and the vtable slots the binding calls.

DESIGN.md, "Backends" (``directml``: ctypes over the real library).  Facts come
from the DirectX headers (see ../shared/directml-abi/SOURCES.md); the tests in
tests/backends/directml/test_abi.py check every size, offset, value, IID and
slot here against ``abi-facts.json``.  The layouts are the same for the Windows
DLL and the Linux/WSL library (the WSL headers fix every type to its Windows
width); only methods returning a struct by value differ (see `com.py`).

Each enum class names its C enum in ``_c_enum`` and the constant prefix in
``_c_prefix`` (member ``DEFAULT`` of `HeapType` is ``D3D12_HEAP_TYPE_DEFAULT``);
each vtable class names its interface in ``_interface``.  Nothing here does
work at import time beyond defining types.
"""

from __future__ import annotations

import ctypes as C
import enum
import uuid
from collections.abc import Callable
from typing import ClassVar, TypeVar


class Guid(C.Structure):
    """GUID / IID: 16 bytes, little-endian Data1..3 (``uuid.UUID.bytes_le``)."""

    _fields_ = [("Data1", C.c_uint32), ("Data2", C.c_uint16), ("Data3", C.c_uint16), ("Data4", C.c_ubyte * 8)]

    @classmethod
    def parse(cls, text: str) -> Guid:
        return cls.from_buffer_copy(uuid.UUID(text).bytes_le)

    def __str__(self) -> str:
        return str(uuid.UUID(bytes_le=bytes(self)))


#: Interface IDs the binding passes as ``REFIID`` (or answers, in the fake device).
IIDS: dict[str, str] = {
    "IUnknown": "00000000-0000-0000-c000-000000000046",
    "IDMLDevice": "6dbd6437-96fd-423f-a98c-ae5e7c2a573f",
    "IDMLOperator": "26caae7a-3081-4633-9581-226fbe57695d",
    "IDMLCompiledOperator": "6b15e56a-bf5c-4902-92d8-da3a650afea4",
    "IDMLOperatorInitializer": "427c1113-435c-469c-8676-4d5dd072f813",
    "IDMLBindingTable": "29c687dc-de74-4e3b-ab00-1168f2fc3cfc",
    "IDMLCommandRecorder": "e6857a76-2e3e-4fdd-bff4-5d2ba10fb453",
    "ID3D12Device": "189819f1-1db6-4b57-be54-1821339b85f7",
    "ID3D12Device5": "8b4f173b-2fea-4b80-8f58-4307191ab95d",
    "ID3D12CommandQueue": "0ec870a6-5d7e-4c22-8cfc-5baae07616ed",
    "ID3D12CommandAllocator": "6102dee4-af59-4b09-b999-b44d73f09b24",
    "ID3D12GraphicsCommandList": "5b160d0f-ac1b-4185-8ba8-b3ae42a5a455",
    "ID3D12Resource": "696442be-a72e-4059-bc79-5b5c98040fad",
    "ID3D12Fence": "0a753dcf-c4d8-4b91-adf6-be5a60d95a76",
    "ID3D12DescriptorHeap": "8efb471d-616c-4f49-90f7-127bb763fa51",
    "IDXCoreAdapterFactory": "78ee5945-c36e-4b13-a669-005dd11c0f06",
    "IDXCoreAdapter": "f0db4c7f-fe5a-42a2-bd62-f2a6cf6fc83e",
}


def iid(interface: str) -> Guid:
    """A fresh GUID struct for ``interface`` (pass ``ctypes.byref`` of it)."""
    return Guid.parse(IIDS[interface])


# ----------------------------------------------------------------------------- enums
class _CEnum(enum.IntEnum):
    """An IntEnum mirroring one C enum (``_c_enum``) whose constants share ``_c_prefix``."""

    _c_enum: ClassVar[str]  # set by the decorator `_c_enum`
    _c_prefix: ClassVar[str]

    @classmethod
    def c_name(cls, member: _CEnum) -> str:
        return cls._c_prefix + member.name


_E = TypeVar("_E", bound=type[_CEnum])


def _c_enum(c_enum: str, prefix: str) -> Callable[[_E], _E]:
    def mark(cls: _E) -> _E:
        cls._c_enum, cls._c_prefix = c_enum, prefix
        return cls
    return mark


@_c_enum("DML_TENSOR_TYPE", "DML_TENSOR_TYPE_")
class TensorType(_CEnum):
    INVALID = 0
    BUFFER = 1


@_c_enum("DML_TENSOR_FLAGS", "DML_TENSOR_FLAG_")
class TensorFlags(_CEnum):
    NONE = 0
    OWNED_BY_DML = 1


@_c_enum("DML_BINDING_TYPE", "DML_BINDING_TYPE_")
class BindingType(_CEnum):
    NONE = 0
    BUFFER = 1
    BUFFER_ARRAY = 2


@_c_enum("DML_CREATE_DEVICE_FLAGS", "DML_CREATE_DEVICE_FLAG_")
class CreateDeviceFlags(_CEnum):
    NONE = 0
    DEBUG = 1


@_c_enum("DML_EXECUTION_FLAGS", "DML_EXECUTION_FLAG_")
class ExecutionFlags(_CEnum):
    NONE = 0
    ALLOW_HALF_PRECISION_COMPUTATION = 1
    DISABLE_META_COMMANDS = 2
    DESCRIPTORS_VOLATILE = 4


@_c_enum("DML_FEATURE", "DML_FEATURE_")
class DmlFeature(_CEnum):
    TENSOR_DATA_TYPE_SUPPORT = 0
    FEATURE_LEVELS = 1


@_c_enum("D3D_FEATURE_LEVEL", "D3D_FEATURE_LEVEL_")
class D3DFeatureLevel(_CEnum):
    FL_1_0_CORE = 0x1000
    FL_11_0 = 0xB000
    FL_12_0 = 0xC000
    FL_12_1 = 0xC100

    @classmethod
    def c_name(cls, member: _CEnum) -> str:
        return "D3D_FEATURE_LEVEL_" + member.name.removeprefix("FL_")


@_c_enum("D3D12_HEAP_TYPE", "D3D12_HEAP_TYPE_")
class HeapType(_CEnum):
    DEFAULT = 1
    UPLOAD = 2
    READBACK = 3


@_c_enum("D3D12_RESOURCE_DIMENSION", "D3D12_RESOURCE_DIMENSION_")
class ResourceDimension(_CEnum):
    BUFFER = 1


@_c_enum("D3D12_TEXTURE_LAYOUT", "D3D12_TEXTURE_LAYOUT_")
class TextureLayout(_CEnum):
    ROW_MAJOR = 1


@_c_enum("D3D12_RESOURCE_FLAGS", "D3D12_RESOURCE_FLAG_")
class ResourceFlags(_CEnum):
    NONE = 0
    ALLOW_UNORDERED_ACCESS = 4


@_c_enum("D3D12_RESOURCE_STATES", "D3D12_RESOURCE_STATE_")
class ResourceState(_CEnum):
    COMMON = 0
    UNORDERED_ACCESS = 0x8
    COPY_DEST = 0x400
    COPY_SOURCE = 0x800
    GENERIC_READ = 0xAC3


@_c_enum("D3D12_COMMAND_LIST_TYPE", "D3D12_COMMAND_LIST_TYPE_")
class CommandListType(_CEnum):
    DIRECT = 0
    COMPUTE = 2


@_c_enum("D3D12_DESCRIPTOR_HEAP_TYPE", "D3D12_DESCRIPTOR_HEAP_TYPE_")
class DescriptorHeapType(_CEnum):
    CBV_SRV_UAV = 0


@_c_enum("D3D12_DESCRIPTOR_HEAP_FLAGS", "D3D12_DESCRIPTOR_HEAP_FLAG_")
class DescriptorHeapFlags(_CEnum):
    NONE = 0
    SHADER_VISIBLE = 1


@_c_enum("D3D12_RESOURCE_BARRIER_TYPE", "D3D12_RESOURCE_BARRIER_TYPE_")
class BarrierType(_CEnum):
    TRANSITION = 0
    UAV = 2


@_c_enum("D3D12_FENCE_FLAGS", "D3D12_FENCE_FLAG_")
class FenceFlags(_CEnum):
    NONE = 0


ENUMS: tuple[type[_CEnum], ...] = (
    TensorType, TensorFlags, BindingType, CreateDeviceFlags, ExecutionFlags, DmlFeature, D3DFeatureLevel,
    HeapType, ResourceDimension, TextureLayout, ResourceFlags, ResourceState, CommandListType,
    DescriptorHeapType, DescriptorHeapFlags, BarrierType, FenceFlags,
)

#: Single constants the binding relies on (abi-facts.json ``constants``).
ALL_SUBRESOURCES = 0xFFFFFFFF
PERSISTENT_BUFFER_ALIGNMENT = 256
TEMPORARY_BUFFER_ALIGNMENT = 256
MINIMUM_BUFFER_TENSOR_ALIGNMENT = 16
CONSTANTS: dict[str, int] = {
    "D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES": ALL_SUBRESOURCES,
    "DML_PERSISTENT_BUFFER_ALIGNMENT": PERSISTENT_BUFFER_ALIGNMENT,
    "DML_TEMPORARY_BUFFER_ALIGNMENT": TEMPORARY_BUFFER_ALIGNMENT,
    "DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT": MINIMUM_BUFFER_TENSOR_ALIGNMENT,
}

#: HRESULT names for messages (com.md, "HRESULT values").
HRESULTS: dict[int, str] = {
    0x00000000: "S_OK", 0x00000001: "S_FALSE", 0x80004001: "E_NOTIMPL", 0x80004002: "E_NOINTERFACE",
    0x80004003: "E_POINTER", 0x80004005: "E_FAIL", 0x8007000E: "E_OUTOFMEMORY", 0x80070057: "E_INVALIDARG",
    0x887A0001: "DXGI_ERROR_INVALID_CALL", 0x887A0004: "DXGI_ERROR_UNSUPPORTED",
    0x887A0005: "DXGI_ERROR_DEVICE_REMOVED", 0x887A0006: "DXGI_ERROR_DEVICE_HUNG",
    0x887A0007: "DXGI_ERROR_DEVICE_RESET", 0x887A0020: "DXGI_ERROR_DRIVER_INTERNAL_ERROR",
    0x887A002D: "DXGI_ERROR_SDK_COMPONENT_MISSING",
}
S_OK = 0
E_NOINTERFACE = -0x7FFFBFFE  # 0x80004002 as a signed HRESULT
E_FAIL = -0x7FFFBFFB
E_INVALIDARG = -0x7FF8FFA9


def hresult_text(hr: int) -> str:
    """``E_INVALIDARG (0x80070057)``."""
    u = hr & 0xFFFFFFFF
    name = HRESULTS.get(u)
    return f"{name} (0x{u:08X})" if name else f"0x{u:08X}"


# ----------------------------------------------------------------------------- DML structs
class DML_BUFFER_TENSOR_DESC(C.Structure):
    _fields_ = [("DataType", C.c_int32), ("Flags", C.c_int32), ("DimensionCount", C.c_uint32),
                ("Sizes", C.c_void_p), ("Strides", C.c_void_p), ("TotalTensorSizeInBytes", C.c_uint64),
                ("GuaranteedBaseOffsetAlignment", C.c_uint32)]


class DML_TENSOR_DESC(C.Structure):
    _fields_ = [("Type", C.c_int32), ("Desc", C.c_void_p)]


class DML_OPERATOR_DESC(C.Structure):
    _fields_ = [("Type", C.c_int32), ("Desc", C.c_void_p)]


class DML_SCALE_BIAS(C.Structure):
    _fields_ = [("Scale", C.c_float), ("Bias", C.c_float)]


class DML_SIZE_2D(C.Structure):
    _fields_ = [("Width", C.c_uint32), ("Height", C.c_uint32)]


class DML_SCALAR_UNION(C.Union):
    _fields_ = [("Bytes", C.c_ubyte * 8), ("Int8", C.c_int8), ("UInt8", C.c_uint8), ("Int16", C.c_int16),
                ("UInt16", C.c_uint16), ("Int32", C.c_int32), ("UInt32", C.c_uint32), ("Int64", C.c_int64),
                ("UInt64", C.c_uint64), ("Float32", C.c_float), ("Float64", C.c_double)]


class D3D12_CPU_DESCRIPTOR_HANDLE(C.Structure):
    _fields_ = [("ptr", C.c_size_t)]


class D3D12_GPU_DESCRIPTOR_HANDLE(C.Structure):
    _fields_ = [("ptr", C.c_uint64)]


class DML_BINDING_PROPERTIES(C.Structure):
    _fields_ = [("RequiredDescriptorCount", C.c_uint32), ("TemporaryResourceSize", C.c_uint64),
                ("PersistentResourceSize", C.c_uint64)]


class DML_BINDING_TABLE_DESC(C.Structure):
    _fields_ = [("Dispatchable", C.c_void_p), ("CPUDescriptorHandle", D3D12_CPU_DESCRIPTOR_HANDLE),
                ("GPUDescriptorHandle", D3D12_GPU_DESCRIPTOR_HANDLE), ("SizeInDescriptors", C.c_uint32)]


class DML_BINDING_DESC(C.Structure):
    _fields_ = [("Type", C.c_int32), ("Desc", C.c_void_p)]


class DML_BUFFER_BINDING(C.Structure):
    _fields_ = [("Buffer", C.c_void_p), ("Offset", C.c_uint64), ("SizeInBytes", C.c_uint64)]


class DML_BUFFER_ARRAY_BINDING(C.Structure):
    _fields_ = [("BindingCount", C.c_uint32), ("Bindings", C.c_void_p)]


class DML_FEATURE_QUERY_FEATURE_LEVELS(C.Structure):
    _fields_ = [("RequestedFeatureLevelCount", C.c_uint32), ("RequestedFeatureLevels", C.c_void_p)]


class DML_FEATURE_DATA_FEATURE_LEVELS(C.Structure):
    _fields_ = [("MaxSupportedFeatureLevel", C.c_int32)]


class DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT(C.Structure):
    _fields_ = [("DataType", C.c_int32)]


class DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT(C.Structure):
    _fields_ = [("IsSupported", C.c_int32)]


# ----------------------------------------------------------------------------- D3D12 structs
class D3D12_HEAP_PROPERTIES(C.Structure):
    _fields_ = [("Type", C.c_int32), ("CPUPageProperty", C.c_int32), ("MemoryPoolPreference", C.c_int32),
                ("CreationNodeMask", C.c_uint32), ("VisibleNodeMask", C.c_uint32)]


class DXGI_SAMPLE_DESC(C.Structure):
    _fields_ = [("Count", C.c_uint32), ("Quality", C.c_uint32)]


class D3D12_RESOURCE_DESC(C.Structure):
    _fields_ = [("Dimension", C.c_int32), ("Alignment", C.c_uint64), ("Width", C.c_uint64), ("Height", C.c_uint32),
                ("DepthOrArraySize", C.c_uint16), ("MipLevels", C.c_uint16), ("Format", C.c_int32),
                ("SampleDesc", DXGI_SAMPLE_DESC), ("Layout", C.c_int32), ("Flags", C.c_int32)]


class D3D12_COMMAND_QUEUE_DESC(C.Structure):
    _fields_ = [("Type", C.c_int32), ("Priority", C.c_int32), ("Flags", C.c_int32), ("NodeMask", C.c_uint32)]


class D3D12_DESCRIPTOR_HEAP_DESC(C.Structure):
    _fields_ = [("Type", C.c_int32), ("NumDescriptors", C.c_uint32), ("Flags", C.c_int32), ("NodeMask", C.c_uint32)]


class D3D12_RANGE(C.Structure):
    _fields_ = [("Begin", C.c_size_t), ("End", C.c_size_t)]


class D3D12_RESOURCE_TRANSITION_BARRIER(C.Structure):
    _fields_ = [("pResource", C.c_void_p), ("Subresource", C.c_uint32), ("StateBefore", C.c_int32),
                ("StateAfter", C.c_int32)]


class D3D12_RESOURCE_ALIASING_BARRIER(C.Structure):
    _fields_ = [("pResourceBefore", C.c_void_p), ("pResourceAfter", C.c_void_p)]


class D3D12_RESOURCE_UAV_BARRIER(C.Structure):
    _fields_ = [("pResource", C.c_void_p)]


class _BarrierUnion(C.Union):
    _fields_ = [("Transition", D3D12_RESOURCE_TRANSITION_BARRIER), ("Aliasing", D3D12_RESOURCE_ALIASING_BARRIER),
                ("UAV", D3D12_RESOURCE_UAV_BARRIER)]


class D3D12_RESOURCE_BARRIER(C.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("Type", C.c_int32), ("Flags", C.c_int32), ("u", _BarrierUnion)]


class LUID(C.Structure):
    _fields_ = [("LowPart", C.c_uint32), ("HighPart", C.c_int32)]


#: Every struct here whose layout abi-facts.json records, by its C name.
STRUCTS: tuple[type[C.Structure] | type[C.Union], ...] = (
    Guid, DML_BUFFER_TENSOR_DESC, DML_TENSOR_DESC, DML_OPERATOR_DESC, DML_SCALE_BIAS, DML_SIZE_2D, DML_SCALAR_UNION,
    D3D12_CPU_DESCRIPTOR_HANDLE, D3D12_GPU_DESCRIPTOR_HANDLE, DML_BINDING_PROPERTIES, DML_BINDING_TABLE_DESC,
    DML_BINDING_DESC, DML_BUFFER_BINDING, DML_BUFFER_ARRAY_BINDING, DML_FEATURE_QUERY_FEATURE_LEVELS,
    DML_FEATURE_DATA_FEATURE_LEVELS, DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT,
    DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT, D3D12_HEAP_PROPERTIES, DXGI_SAMPLE_DESC, D3D12_RESOURCE_DESC,
    D3D12_COMMAND_QUEUE_DESC, D3D12_DESCRIPTOR_HEAP_DESC, D3D12_RANGE, D3D12_RESOURCE_TRANSITION_BARRIER,
    D3D12_RESOURCE_ALIASING_BARRIER, D3D12_RESOURCE_UAV_BARRIER, D3D12_RESOURCE_BARRIER, LUID,
)


def c_name(struct: type) -> str:
    return "GUID" if struct is Guid else struct.__name__


# ----------------------------------------------------------------------------- vtable slots
class _Slots(enum.IntEnum):
    """Vtable indices of one interface's methods that the binding calls."""

    _interface: ClassVar[str]  # set by the decorator `_interface`


_S = TypeVar("_S", bound=type[_Slots])


def _interface(name: str) -> Callable[[_S], _S]:
    def mark(cls: _S) -> _S:
        cls._interface = name
        return cls
    return mark


@_interface("IUnknown")
class IUnknown(_Slots):
    QueryInterface = 0
    AddRef = 1
    Release = 2


@_interface("IDMLDevice")
class IDMLDevice(_Slots):
    CheckFeatureSupport = 7
    CreateOperator = 8
    CompileOperator = 9
    CreateOperatorInitializer = 10
    CreateCommandRecorder = 11
    CreateBindingTable = 12
    GetDeviceRemovedReason = 15


@_interface("IDMLDispatchable")
class IDMLDispatchable(_Slots):
    GetBindingProperties = 8


@_interface("IDMLBindingTable")
class IDMLBindingTable(_Slots):
    BindInputs = 8
    BindOutputs = 9
    BindTemporaryResource = 10
    BindPersistentResource = 11
    Reset = 12


@_interface("IDMLCommandRecorder")
class IDMLCommandRecorder(_Slots):
    RecordDispatch = 8


@_interface("ID3D12Device")
class ID3D12Device(_Slots):
    CreateCommandQueue = 8
    CreateCommandAllocator = 9
    CreateCommandList = 12
    CheckFeatureSupport = 13
    CreateDescriptorHeap = 14
    CreateCommittedResource = 27
    CreateFence = 36
    GetDeviceRemovedReason = 37
    GetAdapterLuid = 43


@_interface("ID3D12CommandQueue")
class ID3D12CommandQueue(_Slots):
    ExecuteCommandLists = 10
    Signal = 14


@_interface("ID3D12CommandAllocator")
class ID3D12CommandAllocator(_Slots):
    Reset = 8


@_interface("ID3D12GraphicsCommandList")
class ID3D12GraphicsCommandList(_Slots):
    Close = 9
    Reset = 10
    CopyBufferRegion = 15
    ResourceBarrier = 26
    SetDescriptorHeaps = 28


@_interface("ID3D12Resource")
class ID3D12Resource(_Slots):
    Map = 8
    Unmap = 9


@_interface("ID3D12Fence")
class ID3D12Fence(_Slots):
    GetCompletedValue = 8
    SetEventOnCompletion = 9


@_interface("ID3D12DescriptorHeap")
class ID3D12DescriptorHeap(_Slots):
    GetCPUDescriptorHandleForHeapStart = 9
    GetGPUDescriptorHandleForHeapStart = 10


@_interface("IDXCoreAdapterFactory")
class IDXCoreAdapterFactory(_Slots):
    GetAdapterByLuid = 4


@_interface("IDXCoreAdapter")
class IDXCoreAdapter(_Slots):
    GetProperty = 6
    GetPropertySize = 7


VTABLES: tuple[type[_Slots], ...] = (
    IUnknown, IDMLDevice, IDMLDispatchable, IDMLBindingTable, IDMLCommandRecorder, ID3D12Device,
    ID3D12CommandQueue, ID3D12CommandAllocator, ID3D12GraphicsCommandList, ID3D12Resource, ID3D12Fence,
    ID3D12DescriptorHeap, IDXCoreAdapterFactory, IDXCoreAdapter,
)

#: Vtable lengths of the D3D12 interfaces the fake device implements in full.
VTABLE_LENGTHS: dict[str, int] = {"ID3D12Device": 44}
