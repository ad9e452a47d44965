"""The worker process of the directml backend over the Linux CPU stack.

Issue #25; the parent side and the wire format are `stack_client`.  Started
through the machine's loader with the stack's library path (`linux_stack.Stack.command`) as
``python -m dmlconform.backends.directml.stack_worker ROOT``: it points
Vulkan at lavapipe, loads the stack's libraries, and answers one JSON line per
request on stdout (logs, vkd3d's included, go to stderr).  Each case runs
through the project's `DirectMLBackend`, unchanged.
"""

from __future__ import annotations

import ctypes as C
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.directml.backend import DirectMLBackend, load_entry
from dmlconform.backends.directml.com import ComError, Convention
from dmlconform.backends.directml.library import Located, Unavailable
from dmlconform.backends.directml.linux_stack import Stack, check
from dmlconform.backends.directml.stack_client import NOT_TRANSLATED, decode_case, encode_outputs
from dmlconform.spec.load import loads_spec
from dmlconform.spec.model import DataType, FeatureLevel, Spec


class _Worker:
    """The backend over the stack's libraries, and what it needs to judge a failure."""

    def __init__(self, stack: Stack, level: str | None) -> None:
        check(stack)
        self.mesa = stack.mesa
        os.environ.update(stack.environment(dict(os.environ)))  # read by the Vulkan loader at device creation
        located = Located(stack.lib / "libdirectml.so", stack.lib / "libd3d12.so", stack.lib / "libdxcore.so", False)
        conv = Convention.native()
        feature_level = FeatureLevel[level].short if level else None
        self.backend = DirectMLBackend.with_entry(load_entry(located, conv), conv, feature_level=feature_level)
        failures = C.CDLL(str(located.d3d12)).bridge_pipeline_failures
        failures.restype, failures.argtypes = C.c_long, []
        self.pipeline_failures: Callable[[], int] = failures
        self.specs: dict[str, Spec] = {}
        self.dtypes: dict[DataType, bool] = {}

    def hello(self) -> dict[str, Any]:
        info = self.backend.info()
        if not info.available:
            return {"type": "hello", "available": False, "reason": f"over the Linux CPU stack: {info.reason}"}
        self.dtypes = self.backend.data_type_support()
        return {"type": "hello", "available": True, "feature_level": info.feature_level.name,
                "device": "DirectML (libdirectml.so of torch-directml) on vkd3d and lavapipe (CPU"
                          + (", Mesa from Debian sid)" if self.mesa == "sid" else ")"),
                "dtypes": [t.name for t, ok in self.dtypes.items() if ok]}

    def run(self, message: Mapping[str, Any]) -> dict[str, Any]:
        if "spec" in message:
            self.specs[message["operator"]] = loads_spec(message["spec"], path=f"<{message['operator']}>")
        spec = self.specs[message["operator"]]
        case, buffers = decode_case(message)
        before, log_start = self.pipeline_failures(), _stderr_size()
        try:
            self.backend.run(spec, case, buffers)
        except NotSupportedError as exc:
            lacking = sorted({t.dtype.name for t in (*case.inputs, *case.outputs) if not self.dtypes.get(t.dtype, True)})
            if lacking and "E_INVALIDARG" in str(exc):
                return {"status": "not_supported", "limit": True,
                        "reason": f"the device does not support {', '.join(lacking)} tensors "
                                  f"(DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT): {exc}"}
            return {"status": "not_supported", "reason": str(exc)}
        except ComError as exc:
            if exc.step == "IDMLDevice::CompileOperator" and self.pipeline_failures() > before:
                detail = _shader_error(log_start)
                return {"status": "not_supported", "limit": True,
                        "reason": f"{NOT_TRANSLATED} ({exc}" + (f"; vkd3d: {detail})" if detail else ")")}
            return {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
        return {"status": "ok", "outputs": encode_outputs(case, buffers)}


def _stderr_size() -> int:
    """Bytes written to stderr so far (it is a file the parent reads; 0 where it is not)."""
    try:
        return os.fstat(2).st_size
    except OSError:
        return 0


def _shader_error(start: int) -> str:
    """vkd3d's first shader error (``E8013: Call to intrinsic function
    dx.op.binaryWithTwoOuts.i32 is unhandled.``) logged since ``start``."""
    try:  # stderr is open for writing only: read the same file through /proc
        with open("/proc/self/fd/2", "rb") as log:
            log.seek(start)
            new = log.read(1 << 20)
    except OSError:
        return ""
    found = re.search(rb"\b(E\d{4}: [^\n]{1,300})", new)
    return found.group(1).decode("utf-8", "replace").strip() if found else ""


def _answer(worker: _Worker, message: Mapping[str, Any]) -> dict[str, Any]:
    """The reply to one request; an exception of the backend is the case's error, not the worker's end."""
    try:
        reply = worker.run(message)
    except Exception as exc:  # noqa: BLE001 - a binding bug costs its case (FAIL with the message), not the run
        reply = {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
    return {"type": "result", "id": message.get("id"), **reply}


def serve(root: Path, stdin: IO[str], stdout: IO[str], mesa: str = "host") -> int:
    """Answer ``hello`` then ``run`` requests until ``bye`` or end of input."""
    worker: _Worker | None = None
    for line in stdin:
        message = json.loads(line)
        if message.get("type") == "bye":
            break
        if message.get("type") == "hello":
            try:
                worker = _Worker(Stack(root, mesa), message.get("feature_level"))
                reply = worker.hello()
            except (Unavailable, OSError) as exc:
                reply = {"type": "hello", "available": False, "reason": f"over the Linux CPU stack: {exc}"}
        elif worker is None:
            reply = {"type": "result", "id": message.get("id"), "status": "error", "message": "no hello first"}
        else:
            reply = _answer(worker, message)
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(serve(Path(sys.argv[1]), sys.stdin, sys.stdout, *sys.argv[2:3]))
