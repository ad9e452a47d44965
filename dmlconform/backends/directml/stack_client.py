"""The directml backend over the Linux CPU stack: the parent side.

Issue #25.  The stack's libraries load only in a process started through
the machine's loader with the stack's library path (`linux_stack.Stack.command`),
so that nothing leaks into the parent; a library crash must also cost one
case, not the run.  The parent
(`StackClient`, used by `DirectMLBackend` when it runs over a stack) starts
``python -m dmlconform.backends.directml.stack_worker ROOT`` that way and
speaks JSON lines with it (through the external backend's pipe handling):

- ``hello`` -> ``{"available": true, "feature_level": "6_2", "device": ...}``
  or ``{"available": false, "reason": ...}``;
- ``run`` (the spec's text the first time an operator comes, the case's
  tensors, attributes and buffers) -> ``ok`` with the output buffers, or
  ``not_supported`` (``limit``: true where the stack, not DirectML, is what
  lacks: a shader vkd3d cannot translate, a data type the device lacks), or
  ``error``.

In the worker (`stack_worker`) the project's own `DirectMLBackend` runs each
case in process, unchanged; this module carries cases across and back.
"""

from __future__ import annotations

import base64
import shutil
import sys
import tempfile
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dmlconform.backends.base import BackendCrashError, DeviceLimitError, NotSupportedError
from dmlconform.backends.directml.library import Unavailable
from dmlconform.backends.directml.linux_stack import Stack, check
from dmlconform.backends.external import ExternalProtocolError, _Died, _Program, _Silent
from dmlconform.cases.model import Case, Layout, TensorData
from dmlconform.spec.model import DataType, FeatureLevel, Spec, numpy_dtype
from dmlconform.spec.store import dumps_spec

#: The reason of a case whose shader the stack cannot compile (issue #25's words).
NOT_TRANSLATED = "CompileOperator failed: the D3D12 layer could not translate the shader"


# ------------------------------------------------------------------ the wire format
def _value(value: float | int | bool | str) -> Any:
    """An attribute value as JSON (floats exactly, infinities and NaN included)."""
    return {"float": value.hex()} if isinstance(value, float) else value


def _unvalue(value: Any) -> float | int | bool | str:
    return float.fromhex(value["float"]) if isinstance(value, dict) else value


def _tensor(t: TensorData) -> dict[str, Any]:
    return {"name": t.name, "dtype": t.dtype.name, "sizes": list(t.sizes), "strides": list(t.strides)}


def encode_case(case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The case and its input buffers as a JSON object."""
    return {"id": case.id, "operator": case.operator, "level": case.level.name, "dtype": case.dtype.name,
            "inputs": [_tensor(t) for t in case.inputs], "outputs": [_tensor(t) for t in case.outputs],
            "attributes": [[n, _value(v)] for n, v in case.attributes], "layout": case.layout.value,
            "aliases": [list(a) for a in case.aliases], "expect_supported": case.expect_supported,
            "buffers": {t.name: _b64(buffers[t.name]) for t in case.inputs},
            "lengths": {t.name: int(buffers[t.name].size) for t in case.outputs}}


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()


def encode_outputs(case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, str]:
    """The output buffers of a case that ran, for the reply."""
    return {t.name: _b64(buffers[t.name]) for t in case.outputs}


def _data(t: Mapping[str, Any], raw: bytes | None, length: int) -> TensorData:
    dtype = DataType[t["dtype"]]
    buffer = np.frombuffer(raw, dtype=numpy_dtype(dtype)) if raw is not None else \
        np.zeros(length, dtype=numpy_dtype(dtype))
    return TensorData(t["name"], dtype, tuple(t["sizes"]), tuple(t["strides"]), buffer)


def decode_case(message: Mapping[str, Any]) -> tuple[Case, dict[str, np.ndarray]]:
    """The case of `encode_case` and writable buffers (outputs zeroed, as
    long as the parent's; an in-place output shares its input's)."""
    lengths = message["lengths"]
    raws = {name: base64.b64decode(text) for name, text in message["buffers"].items()}
    inputs = tuple(_data(t, raws[t["name"]], 0) for t in message["inputs"])
    outputs = tuple(_data(t, None, lengths[t["name"]]) for t in message["outputs"])
    case = Case(message["id"], message["operator"], FeatureLevel[message["level"]], DataType[message["dtype"]],
                inputs, outputs, tuple((n, _unvalue(v)) for n, v in message["attributes"]),
                Layout(message["layout"]), tuple((a[0], a[1]) for a in message["aliases"]),
                bool(message["expect_supported"]))
    buffers = {t.name: t.buffer.copy() for t in inputs}
    aliases = dict(case.aliases)
    for t in outputs:
        buffers[t.name] = buffers[aliases[t.name]] if t.name in aliases else t.buffer.copy()
    return case, buffers


# ------------------------------------------------------------------ the parent
class WorkerError(Exception):
    """The worker raised while running a case (its exception type and message)."""


@dataclass(frozen=True, slots=True)
class Hello:
    """What the worker says about itself once the libraries are loaded."""

    feature_level: FeatureLevel
    device: str


def _stop(state: dict[str, Any]) -> None:
    program = state.pop("program", None)
    if program is not None:
        program.stop()
    folder = state.pop("folder", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


class StackClient:
    """The worker process over ``stack``: started on first use, restarted
    after it dies; ``timeout`` bounds each reply (seconds)."""

    def __init__(self, stack: Stack, feature_level: FeatureLevel | None, *, timeout: float = 300.0,
                 start_timeout: float = 120.0) -> None:
        self.stack, self.feature_level = stack, feature_level
        self.timeout, self.start_timeout = timeout, start_timeout
        self._state: dict[str, Any] = {}
        self._sent: set[str] = set()
        weakref.finalize(self, _stop, self._state)

    def close(self) -> None:
        _stop(self._state)

    def start(self) -> Hello:
        """Start the worker and greet it; `Unavailable` with the reason where it cannot work."""
        check(self.stack)
        folder = self._state.setdefault("folder", Path(tempfile.mkdtemp(prefix="dmlconform-directml-")))
        argv = self.stack.command([sys.executable, "-m", "dmlconform.backends.directml.stack_worker",
                                   str(self.stack.root), self.stack.mesa])
        try:
            program = _Program(argv, folder / "stderr.txt")
        except OSError as exc:
            raise Unavailable(f"cannot start the worker through {self.stack.loader}: {exc}") from None
        level = self.feature_level.name if self.feature_level else None
        try:
            program.send({"type": "hello", "feature_level": level})
            reply = program.receive(self.start_timeout)
        except (_Died, _Silent, ExternalProtocolError) as exc:
            program.kill()
            what = f"no reply within {self.start_timeout:g} s" if isinstance(exc, _Silent) else \
                f"it exited ({program.status()})" if isinstance(exc, _Died) else str(exc)
            tail = program.stderr_tail()[-600:]
            raise Unavailable(f"the directml worker over {self.stack.root} failed to start: {what}"
                              + (f"; stderr: {tail}" if tail else "")) from None
        if not reply.get("available"):
            program.kill()
            raise Unavailable(str(reply.get("reason") or "the worker gave no reason"))
        self._state["program"], self._sent = program, set()
        return Hello(FeatureLevel[reply["feature_level"]], str(reply.get("device", "")))

    def _program(self) -> Any:
        program = self._state.get("program")
        if program is not None and program.proc.poll() is None:
            return program
        self._state.pop("program", None)
        try:
            self.start()
        except Unavailable as exc:
            raise BackendCrashError(f"the worker could not be restarted: {exc}") from None
        return self._state["program"]

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        """Run ``case`` in the worker; its outputs land in ``buffers``."""
        program = self._program()
        request = {"type": "run", **encode_case(case, buffers)}
        if spec.operator not in self._sent:
            request["spec"] = dumps_spec(spec)
        reply = self._exchange(program, request)
        self._sent.add(spec.operator)
        status = reply.get("status")
        if status == "not_supported":
            raise (DeviceLimitError if reply.get("limit") else NotSupportedError)(str(reply.get("reason")))
        if status != "ok":
            raise WorkerError(str(reply.get("message", reply)))
        for t in case.outputs:
            raw = base64.b64decode(reply["outputs"][t.name])
            target = buffers[t.name]
            target[...] = np.frombuffer(raw, dtype=target.dtype)[: target.size]

    def _exchange(self, program: Any, request: Mapping[str, Any]) -> dict[str, Any]:
        try:
            program.send(request)
            reply: dict[str, Any] = program.receive(self.timeout)
            return reply
        except (_Died, _Silent) as exc:
            self._state.pop("program", None)
            status = program.status() if isinstance(exc, _Died) else f"no reply within {self.timeout:g} s"
            program.kill()
            tail = program.stderr_tail()[-600:]
            raise BackendCrashError(f"the directml worker died on this case ({status}); it is restarted for the "
                                    "next case" + (f"; stderr tail: {tail}" if tail else "")) from None
