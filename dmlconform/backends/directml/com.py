"""Calling COM methods through vtable slots, with the platform's convention.

DESIGN.md, "Backends".  An interface pointer points at an object whose first
8 bytes are the address of its vtable; method *i* is ``vtbl[i]``, called with
the interface pointer first.  Windows x64 and Linux/WSL (System V) agree on
everything but methods that return a struct by value (com.md §1):

- Windows (MSVC member functions): a hidden result pointer is the *second*
  argument, and the method returns it;
- Linux/WSL: an ordinary C struct return (ctypes handles it when ``restype``
  is the Structure).

`Convention` holds that one difference, so the whole binding (and the fake
COM layer of the tests, which implements both forms) is written once.
"""

from __future__ import annotations

import ctypes as C
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dmlconform.backends.directml.abi import IUnknown, hresult_text


class ComError(Exception):
    """A COM call failed: ``step`` names the call (``IDMLDevice::CreateOperator``),
    ``hresult`` is the signed HRESULT.  The backend turns it into a clear error
    or, for CreateOperator's E_INVALIDARG, into a clean rejection."""

    def __init__(self, step: str, hresult: int, detail: str = "") -> None:
        self.step, self.hresult, self.detail = step, hresult, detail
        extra = f" ({detail})" if detail else ""
        super().__init__(f"{step} failed with {hresult_text(hresult)}{extra}")


class DeviceRemovedError(ComError):
    """A COM call failed and the D3D12 device is gone (its own HRESULT or
    GetDeviceRemovedReason is one of `DEVICE_LOST`): the case it ran is
    that case's result, and the backend opens a new device for the next."""

    def __init__(self, cause: ComError, reason: int, dml_reason: int = 0) -> None:
        said = f"{cause.detail}; " if cause.detail else ""
        dml = f", IDMLDevice::GetDeviceRemovedReason: {hresult_text(dml_reason)}" if dml_reason else ""
        super().__init__(cause.step, cause.hresult, f"{said}the device was removed, GetDeviceRemovedReason: "
                                                    f"{hresult_text(reason)}{dml}; the next case runs on a new device")
        self.reason, self.dml_reason = reason, dml_reason


#: HRESULTs (signed) that mean the device is lost until it is created again.
DEVICE_LOST = frozenset(h - (1 << 32) for h in (0x887A0005, 0x887A0006, 0x887A0007, 0x887A0020))


def check(hr: int, step: str, detail: str = "") -> None:
    """Raise `ComError` for a failed (negative) HRESULT."""
    if hr < 0:
        raise ComError(step, hr, detail)


@dataclass(frozen=True, slots=True)
class Convention:
    """How methods are called on this platform (``windows``: the Microsoft
    x64 convention with hidden struct-return pointers)."""

    windows: bool

    @classmethod
    def native(cls) -> Convention:
        return cls(windows=sys.platform == "win32")

    @property
    def functype(self) -> Callable[..., Any]:
        """WINFUNCTYPE on Windows (the same as CFUNCTYPE on x64), else CFUNCTYPE."""
        return getattr(C, "WINFUNCTYPE", C.CFUNCTYPE) if self.windows else C.CFUNCTYPE

    def method(self, this: int, slot: int, restype: Any, *argtypes: Any) -> Callable[..., Any]:
        """The function at ``vtbl[slot]`` of the object ``this``, typed."""
        if not this:
            raise ValueError(f"calling vtable slot {slot} on a NULL interface pointer")
        vtbl = C.cast(C.c_void_p(this), C.POINTER(C.POINTER(C.c_void_p)))[0]
        proto = self.functype(restype, C.c_void_p, *argtypes)
        fn = proto(vtbl[slot])
        return lambda *args: fn(this, *args)

    def call(self, this: int, slot: int, restype: Any, argtypes: tuple[Any, ...], *args: Any) -> Any:
        return self.method(this, slot, restype, *argtypes)(*args)

    def hr(self, this: int, slot: int, step: str, argtypes: tuple[Any, ...], *args: Any) -> None:
        """Call a method that returns an HRESULT; raise `ComError` on failure."""
        check(self.call(this, slot, C.c_int32, argtypes, *args), step)

    def struct(self, this: int, slot: int, struct: type[C.Structure], argtypes: tuple[Any, ...] = (),
               *args: Any) -> Any:
        """Call a method that returns ``struct`` by value, per the platform."""
        if self.windows:
            out = struct()
            self.call(this, slot, C.c_void_p, (C.POINTER(struct), *argtypes), C.byref(out), *args)
            return out
        return self.call(this, slot, struct, argtypes, *args)

    def release(self, this: int) -> None:
        if this:
            self.call(this, IUnknown.Release, C.c_uint32, ())


class Owned:
    """Interface pointers created during one piece of work, released together
    in reverse order (``with Owned(conv) as owned: p = owned.add(ptr)``)."""

    def __init__(self, conv: Convention) -> None:
        self.conv = conv
        self.pointers: list[int] = []

    def add(self, pointer: C.c_void_p | int | None) -> int:
        value = pointer.value if isinstance(pointer, C.c_void_p) else pointer
        if value:
            self.pointers.append(int(value))
        return int(value or 0)

    def __enter__(self) -> Owned:
        return self

    def __exit__(self, *exc: object) -> None:
        while self.pointers:
            self.conv.release(self.pointers.pop())
