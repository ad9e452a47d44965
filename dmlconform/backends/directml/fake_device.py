"""A fake ID3D12Device: just enough D3D12 for DMLCreateDevice to succeed.

DESIGN.md, "Backends": the real Linux libdirectml.so validates operator descs
without a GPU.  ``DMLCreateDevice`` asks the D3D12 device for its adapter LUID
(then looks the adapter up through DXCore: see fake_dxcore.c), for
D3D12_FEATURE_FEATURE_LEVELS, D3D12_OPTIONS (double precision, min precision),
SHADER_MODEL, D3D12_OPTIONS1 (64-bit integer shader ops) and D3D12_OPTIONS4
(native 16-bit shader ops), and QueryInterfaces for ID3D12Device5.  This
object answers those from `Capabilities` (which the validate report records)
and returns E_NOTIMPL for every other method: it can never execute work, so
CompileOperator must never be called on a device built on it.

System V convention only (it serves the Linux library).  The callbacks are
ctypes functions behind a real vtable; GetAdapterLuid returns its 8-byte LUID
by value, which System V returns in RAX, so the callback returns a uint64.
"""

from __future__ import annotations

import ctypes as C
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dmlconform.backends.directml import abi

#: D3D12_FEATURE values the library asks about, and the sizes of their data structs.
FEATURE_D3D12_OPTIONS = 0
FEATURE_FEATURE_LEVELS = 2
FEATURE_SHADER_MODEL = 7
FEATURE_D3D12_OPTIONS1 = 8
FEATURE_D3D12_OPTIONS4 = 23
FEATURE_NAMES = {0: "D3D12_OPTIONS", 2: "FEATURE_LEVELS", 7: "SHADER_MODEL", 8: "D3D12_OPTIONS1",
                 23: "D3D12_OPTIONS4"}
_MIN_PRECISION_16_BIT = 0x2
E_NOTIMPL = -0x7FFFBFFF


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What the fake device advertises (part of the validate report)."""

    d3d_feature_level: int = int(abi.D3DFeatureLevel.FL_12_1)
    shader_model: int = 0x66
    fp16: bool = True          # D3D12_OPTIONS.MinPrecisionSupport 16-bit + OPTIONS4.Native16BitShaderOpsSupported
    int64: bool = True         # D3D12_OPTIONS1.Int64ShaderOps
    fp64: bool = True          # D3D12_OPTIONS.DoublePrecisionFloatShaderOps
    wave_lanes: int = 32       # D3D12_OPTIONS1.WaveLaneCountMin/Max
    luid: tuple[int, int] = (0x5EED, 0)

    def as_dict(self) -> dict[str, Any]:
        return {"d3d_feature_level": f"0x{self.d3d_feature_level:X}", "shader_model": f"0x{self.shader_model:X}",
                "fp16": self.fp16, "int64": self.int64, "fp64": self.fp64, "wave_lanes": self.wave_lanes}

    @classmethod
    def parse(cls, text: str) -> Capabilities:
        """``fp16,int64`` (the listed ones on, the other flags off), ``all`` or ``none``."""
        names = {"fp16", "int64", "fp64"}
        wanted = {t.strip().lower() for t in text.split(",") if t.strip()}
        if wanted == {"all"}:
            wanted = names
        elif wanted == {"none"}:
            wanted = set()
        unknown = wanted - names
        if unknown:
            raise ValueError(f"unknown capability {', '.join(sorted(unknown))} (known: fp16, int64, fp64, all, none)")
        return cls(fp16="fp16" in wanted, int64="int64" in wanted, fp64="fp64" in wanted)


@dataclass
class FakeD3D12Device:
    """The object (``pointer``) and its vtable; keep it alive while the
    library holds the device.  ``queries`` records each CheckFeatureSupport
    feature asked for, ``interfaces`` each QueryInterface IID."""

    caps: Capabilities = field(default_factory=Capabilities)
    queries: list[str] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)
    unimplemented: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = abi.VTABLE_LENGTHS["ID3D12Device"]
        methods: dict[int, Any] = {
            abi.IUnknown.QueryInterface: C.CFUNCTYPE(C.c_int32, C.c_void_p, C.POINTER(abi.Guid),
                                                     C.POINTER(C.c_void_p))(self._query_interface),
            abi.IUnknown.AddRef: C.CFUNCTYPE(C.c_uint32, C.c_void_p)(lambda this: 1),
            abi.IUnknown.Release: C.CFUNCTYPE(C.c_uint32, C.c_void_p)(lambda this: 1),
            7: C.CFUNCTYPE(C.c_uint32, C.c_void_p)(lambda this: 1),  # GetNodeCount
            abi.ID3D12Device.CheckFeatureSupport: C.CFUNCTYPE(C.c_int32, C.c_void_p, C.c_int32, C.c_void_p,
                                                              C.c_uint32)(self._check_feature_support),
            abi.ID3D12Device.GetAdapterLuid: C.CFUNCTYPE(C.c_uint64, C.c_void_p)(self._luid),
            abi.ID3D12Device.GetDeviceRemovedReason: C.CFUNCTYPE(C.c_int32, C.c_void_p)(lambda this: abi.S_OK),
        }
        for slot in range(n):
            methods.setdefault(slot, C.CFUNCTYPE(C.c_int32, C.c_void_p)(self._stub(slot)))
        self._callbacks = list(methods.values())
        self._vtbl = (C.c_void_p * n)(*[C.cast(methods[i], C.c_void_p) for i in range(n)])
        self._object = (C.c_void_p * 1)(C.addressof(self._vtbl))

    @property
    def pointer(self) -> int:
        return C.addressof(self._object)

    def _stub(self, slot: int) -> Callable[[int], int]:
        def not_implemented(this: int) -> int:
            self.unimplemented.append(slot)
            return E_NOTIMPL
        return not_implemented

    def _query_interface(self, this: int, riid: Any, out: Any) -> int:
        name = str(riid.contents)
        self.interfaces.append(name)
        if name in (abi.IIDS["ID3D12Device"], abi.IIDS["IUnknown"]):
            out[0] = self.pointer
            return abi.S_OK
        out[0] = None
        return abi.E_NOINTERFACE

    def _luid(self, this: int) -> int:
        low, high = self.caps.luid
        return (low & 0xFFFFFFFF) | ((high & 0xFFFFFFFF) << 32)

    def _check_feature_support(self, this: int, feature: int, data: int, size: int) -> int:
        self.queries.append(FEATURE_NAMES.get(feature, str(feature)))
        if not data:
            return abi.E_INVALIDARG
        words = (C.c_uint32 * (size // 4)).from_address(data)
        caps = self.caps
        if feature == FEATURE_FEATURE_LEVELS and size >= 24:
            requested = C.cast(C.c_void_p.from_address(data + 8), C.POINTER(C.c_int32))
            count = words[0]
            levels = [requested[i] for i in range(count)] if requested else []
            ok = [lv for lv in levels if lv <= caps.d3d_feature_level]
            words[4] = max(ok) if ok else caps.d3d_feature_level
        elif feature == FEATURE_SHADER_MODEL and size >= 4:
            words[0] = min(words[0] or caps.shader_model, caps.shader_model)
        elif feature == FEATURE_D3D12_OPTIONS and size >= 60:
            C.memset(data, 0, size)
            words[0] = int(caps.fp64)
            words[2] = _MIN_PRECISION_16_BIT if caps.fp16 else 0
            words[4] = 3  # ResourceBindingTier 3
            words[9] = 40  # MaxGPUVirtualAddressBitsPerResource
            words[14] = 2  # ResourceHeapTier 2
        elif feature == FEATURE_D3D12_OPTIONS1 and size >= 24:
            C.memset(data, 0, size)
            words[0], words[1], words[2], words[3] = 1, caps.wave_lanes, caps.wave_lanes, caps.wave_lanes * 64
            words[4], words[5] = 1, int(caps.int64)
        elif feature == FEATURE_D3D12_OPTIONS4 and size >= 12:
            C.memset(data, 0, size)
            words[2] = int(caps.fp16)
        else:
            return abi.E_INVALIDARG
        return abi.S_OK
