"""The external backend: any program that speaks the dmlconform line protocol.

DESIGN.md, "Backends" (``external``).  A team gates a C++ or Rust
implementation without writing Python: ``--backend external --backend-arg
cmd='./my-backend --device 0'`` starts the program once, says ``hello``, and
then sends one JSON line per case naming ``.npy`` files in a temporary folder;
the program fills the output files and answers ``ok``, ``not_supported`` or
``error``.  The protocol is specified in docs/external-backend.md; this module
is its reference implementation on the harness side.

What must hold:

- replies are read with a timeout (a reader thread per program feeds a queue,
  which works the same on Windows and POSIX), so a silent program never
  blocks the run;
- a program that dies while a case is in flight costs that case: it raises
  `BackendCrashError` with the exit status and the tail of its stderr, and the
  next case starts the program afresh;
- a program that cannot start or fails the handshake makes the backend
  unavailable (``info().available`` False with the reason), it never raises;
- the command line is split with `shlex` on POSIX and passed as one string on
  Windows (where CreateProcess splits it), never through a shell.
"""

from __future__ import annotations

import json
import math
import os
import queue
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

import dmlconform
from dmlconform.backends.base import (
    SUPPORTED,
    BackendCrashError,
    BackendInfo,
    NotSupportedError,
    OptionsRequired,
    Support,
)
from dmlconform.cases.model import Case
from dmlconform.cases.store import read_npy
from dmlconform.errors import InputError, LocatedError
from dmlconform.spec.model import DataType, FeatureLevel, Spec, numpy_dtype

PROTOCOL = 1
#: Bytes of the program's stderr quoted when it dies or fails the handshake.
STDERR_TAIL = 2000
_OPTIONS = ("cmd", "timeout", "start_timeout")
_USAGE = ("the external backend needs the program to run: --backend-arg cmd='PROGRAM ARGS' "
          "(e.g. cmd='node examples/external-node/backend.js'); other options: timeout=SECONDS "
          "(per case, default 60), start_timeout=SECONDS (handshake, default 30)")


class ExternalProtocolError(Exception):
    """The program broke the protocol (a reply that is not JSON, names another
    case, or lacks a key).  The case FAILs and the program is restarted."""


class ExternalBackendError(Exception):
    """The program answered ``"status": "error"`` for a case (verdict FAIL)."""


class _Died(Exception):
    """The program closed its stdout (it exited or crashed)."""


class _Silent(Exception):
    """No reply within the timeout."""


@dataclass(frozen=True, slots=True)
class Hello:
    """What the program said about itself in the handshake."""

    name: str
    device: str
    version: str
    feature_level: FeatureLevel
    flush_subnormals: bool
    ops: frozenset[str] | None           # None: it did not say (every operator is tried)
    float16_accumulation: bool | frozenset[str] = False  # `BackendInfo.float16_accumulation`
    subset: bool = False                 # `BackendInfo.subset`; absent: it implements the tables


def wire_dtype(dtype: DataType) -> np.dtype:
    """The numpy type a tensor of ``dtype`` travels as: its own, little-endian,
    except 4-bit types, which travel one element per byte (int8 / uint8)."""
    if dtype is DataType.INT4:
        return np.dtype("int8")
    if dtype is DataType.UINT4:
        return np.dtype("uint8")
    return numpy_dtype(dtype).newbyteorder("<")


def split_command(cmd: str, *, windows: bool | None = None) -> str | list[str]:
    """The command for `subprocess.Popen`: a list on POSIX (shlex rules), the
    string itself on Windows, where the program's runtime splits it."""
    if windows if windows is not None else os.name == "nt":
        return cmd
    return shlex.split(cmd)


def _seconds(value: str | float, option: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise InputError(f"external backend: {option}={value!r} is not a number of seconds") from None
    if not seconds > 0 or math.isinf(seconds):
        raise InputError(f"external backend: {option}={value!r} must be a positive, finite number of seconds")
    return seconds


class _Program:
    """One running instance: pipes, a reader thread, stderr captured to a file
    (a file, not a pipe, so a chatty program can never fill a pipe and stall)."""

    def __init__(self, argv: str | list[str], stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        self._stderr: IO[bytes] = open(stderr_path, "wb")
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._stderr, bufsize=0)
        except BaseException:
            self._stderr.close()
            raise
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=_pump, args=(self.proc.stdout, self._lines), daemon=True).start()

    def send(self, message: Mapping[str, Any]) -> None:
        data = (json.dumps(message, sort_keys=True, allow_nan=False) + "\n").encode("utf-8")
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise _Died() from None

    def receive(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise _Silent() from None
        if line is None:
            raise _Died()
        try:
            message = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ExternalProtocolError(f"a stdout line that is not UTF-8 JSON ({exc}): {line[:200]!r}; "
                                        "write logs to stderr") from None
        if not isinstance(message, dict):
            raise ExternalProtocolError(f"a reply that is not a JSON object: {line[:200]!r}")
        return message

    def status(self, *, wait: float = 2.0) -> str:
        """How the process ended (waits a little for it to finish dying)."""
        try:
            code = self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return "still running"
        if code < 0 and hasattr(signal, "Signals"):
            try:
                return f"killed by signal {-code} ({signal.Signals(-code).name})"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit status {code}" if code < 256 else f"exit status {code:#x}"

    def stderr_tail(self) -> str:
        try:
            with open(self.stderr_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - STDERR_TAIL))
                text = f.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""
        return text

    def stop(self, *, grace: float = 2.0) -> None:
        """``bye``, then close stdin; kill what is still running after ``grace``."""
        if self.proc.poll() is None:
            try:
                self.send({"type": "bye"})
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except (_Died, OSError):
                pass
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self._close()

    def _close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._stderr.close()


def _pump(stream: IO[bytes], lines: queue.Queue[bytes | None]) -> None:
    """Reader thread: every stdout line into the queue, None at end of file."""
    try:
        for line in iter(stream.readline, b""):
            lines.put(line)
    except (OSError, ValueError):
        pass
    lines.put(None)


@dataclass
class _State:
    """What the finalizer cleans up: the running program and the temp folder."""

    program: _Program | None = None
    folder: Path | None = None


def _cleanup(state: _State) -> None:
    if state.program is not None:
        state.program.stop()
        state.program = None
    if state.folder is not None:
        shutil.rmtree(state.folder, ignore_errors=True)
        state.folder = None


class ExternalBackend:
    """``cmd`` is the program's command line; ``timeout`` the seconds a case's
    reply may take (default 60), ``start_timeout`` the handshake's (default 30).
    The program is started on first use and restarted after it dies."""

    def __init__(self, cmd: str | None = None, timeout: str | float = 60.0, start_timeout: str | float = 30.0,
                 **options: str) -> None:
        if options:
            raise InputError(f"external backend: unknown option(s) {', '.join(sorted(options))}; "
                             f"it knows {', '.join(_OPTIONS)}")
        if not cmd or not str(cmd).strip():
            raise OptionsRequired(_USAGE, summary="needs --backend-arg cmd='PROGRAM ARGS': the program that "
                                                  "speaks the protocol of docs/external-backend.md")
        try:
            self._argv = split_command(str(cmd))
        except ValueError as exc:
            raise InputError(f"external backend: cmd={cmd!r} cannot be split into arguments: {exc}") from None
        self.cmd = str(cmd)
        self.timeout = _seconds(timeout, "timeout")
        self.start_timeout = _seconds(start_timeout, "start_timeout")
        self._state = _State()
        self._hello: Hello | None = None
        self._failure: str | None = None       # why the last start failed
        self._seq = 0
        weakref.finalize(self, _cleanup, self._state)

    # -- the Backend protocol ----------------------------------------------------------
    def info(self) -> BackendInfo:
        if self._hello is None and self._failure is None:
            self._start()
        hello = self._hello
        if hello is None:
            return BackendInfo(name="external", device="?", version="?", feature_level=max(FeatureLevel),
                               available=False, reason=self._failure)
        return BackendInfo(name="external", device=f"{hello.name} ({hello.device})", version=hello.version,
                           feature_level=hello.feature_level, flush_subnormals=hello.flush_subnormals,
                           float16_accumulation=hello.float16_accumulation, subset=hello.subset)

    def implements(self, spec: Spec) -> str | None:
        """Why the program does not implement ``spec``'s operator: absent
        from the ``ops`` of its hello reply (`backends.base.
        ImplementingBackend`); None when it is there or the program gave no
        list (every operator is tried)."""
        hello = self._hello
        if hello is not None and hello.ops is not None and spec.operator not in hello.ops:
            return f"{hello.name} does not implement {spec.operator} (not in its hello ops)"
        return None

    def supports(self, spec: Spec, case: Case) -> Support:
        hello = self._hello
        if hello is not None and hello.ops is not None and case.operator not in hello.ops:
            return Support(False, f"{hello.name} does not implement {case.operator} (not in its hello ops)")
        return SUPPORTED

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        program = self._running()
        self._seq += 1
        folder = self._folder() / f"{self._seq:06d}"
        folder.mkdir()
        try:
            request, files = _request(case, buffers, folder, self._seq)
            reply = self._exchange(program, request, case)
            _answer(reply, case, buffers, files)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        """Say ``bye`` and remove the temporary folder (also done at exit)."""
        _cleanup(self._state)

    # -- lifecycle -----------------------------------------------------------------------
    def _folder(self) -> Path:
        if self._state.folder is None:
            self._state.folder = Path(tempfile.mkdtemp(prefix="dmlconform-external-"))
        return self._state.folder

    def _start(self) -> _Program | None:
        """Start and greet the program; on failure record why and return None."""
        self._failure = None
        try:
            program = _Program(self._argv, self._folder() / "stderr.txt")
        except OSError as exc:
            self._failure = f"cannot start {self.cmd!r}: {exc}"
            return None
        try:
            program.send({"type": "hello", "protocol": PROTOCOL, "harness": f"dmlconform {dmlconform.__version__}"})
            self._hello = _parse_hello(program.receive(self.start_timeout))
        except (_Died, _Silent, ExternalProtocolError, _Unavailable) as exc:
            self._failure = self._start_failure(program, exc)
            return None
        self._state.program = program
        return program

    def _start_failure(self, program: _Program, exc: Exception) -> str:
        if isinstance(exc, _Silent):
            what = f"no hello reply within {self.start_timeout:g} s"
        elif isinstance(exc, _Died):
            what = f"it exited before its hello reply ({program.status()})"
        else:
            what = str(exc)
        program.kill()
        tail = program.stderr_tail()
        return f"{self.cmd!r}: {what}" + (f"; stderr: {tail}" if tail else "")

    def _running(self) -> _Program:
        program = self._state.program
        if program is not None and program.proc.poll() is None:
            return program
        self._state.program = None
        started = self._start()
        if started is None:
            raise BackendCrashError(f"the program could not be restarted: {self._failure}")
        return started

    def _exchange(self, program: _Program, request: Mapping[str, Any], case: Case) -> dict[str, Any]:
        try:
            program.send(request)
            reply = program.receive(self.timeout)
            if reply.get("id") != case.id:
                raise ExternalProtocolError(f"the reply names case {reply.get('id')!r}, not {case.id!r}")
            return reply
        except _Died:
            self._state.program = None
            status, tail = program.status(), program.stderr_tail()
            program.kill()
            raise BackendCrashError(f"the program died on this case ({status}); it is restarted for the next case"
                                    + (f"; stderr tail: {tail}" if tail else "")) from None
        except _Silent:
            self._state.program = None
            program.kill()
            tail = program.stderr_tail()
            raise BackendCrashError(f"no reply within {self.timeout:g} s (timeout=); the program was killed and is "
                                    "restarted for the next case" + (f"; stderr tail: {tail}" if tail else "")) from None
        except ExternalProtocolError:
            self._state.program = None
            program.kill()
            raise


class _Unavailable(Exception):
    """The program said ``"available": false`` in its hello reply."""


def _parse_hello(reply: Mapping[str, Any]) -> Hello:
    if reply.get("type") != "hello":
        raise ExternalProtocolError(f'the first reply must be {{"type": "hello", ...}}, got {_short(reply)}')
    if reply.get("protocol") != PROTOCOL:
        raise ExternalProtocolError(f"protocol={reply.get('protocol')!r} is not supported (this dmlconform speaks "
                                    f"{PROTOCOL})")
    if reply.get("available") is False:
        raise _Unavailable(f"the program reports itself unavailable: {reply.get('reason') or 'no reason given'}")
    try:
        level = FeatureLevel.parse(str(reply["feature_level"]))
        ops = reply.get("ops")
        if ops is not None and (not isinstance(ops, list) or not all(isinstance(o, str) for o in ops)):
            raise ValueError(f"ops={ops!r} must be a list of operator names")
        flush = reply.get("flush_subnormals", False)
        if not isinstance(flush, bool):
            raise ValueError(f"flush_subnormals={flush!r} must be true or false")
        subset = reply.get("subset", False)
        if not isinstance(subset, bool):
            raise ValueError(f"subset={subset!r} must be true (a subset of DirectML's tables) or false")
        return Hello(name=str(reply.get("name") or "external program"), device=str(reply.get("device") or "?"),
                     version=str(reply.get("version") or "?"), feature_level=level, flush_subnormals=flush,
                     ops=None if ops is None else frozenset(ops),
                     float16_accumulation=_float16(reply.get("float16_accumulation", False)), subset=subset)
    except KeyError as exc:
        raise ExternalProtocolError(f"the hello reply lacks {exc.args[0]!r}: {_short(reply)}") from None
    except ValueError as exc:
        raise ExternalProtocolError(f"bad hello reply: {exc}") from None


def _float16(declared: Any) -> bool | frozenset[str]:
    """The hello's ``float16_accumulation``: true (every operator), false, or the operator names."""
    if isinstance(declared, bool):
        return declared
    if isinstance(declared, list) and all(isinstance(o, str) for o in declared):
        return frozenset(declared)
    raise ValueError(f"float16_accumulation={declared!r} must be true, false or a list of operator names")


def _short(message: Mapping[str, Any]) -> str:
    text = json.dumps(message, sort_keys=True, default=str)
    return text if len(text) <= 200 else text[:200] + "..."


def _attribute(value: float | int | bool | str) -> float | int | bool | str:
    """JSON has no infinity or NaN: those FLOAT values travel as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _request(case: Case, buffers: Mapping[str, np.ndarray], folder: Path,
             seq: int) -> tuple[dict[str, Any], dict[str, Path]]:
    """Write the buffers of ``case`` under ``folder`` and build its ``run``
    message; returns it with the file of each tensor."""
    files: dict[str, Path] = {}

    def tensor(t: Any, file: Path) -> dict[str, Any]:
        return {"name": t.name, "dtype": t.dtype.name, "sizes": list(t.sizes), "strides": list(t.strides),
                "file": str(file)}

    for t in case.inputs:
        files[t.name] = folder / f"{t.name}.npy"
        np.save(files[t.name], np.ascontiguousarray(buffers[t.name]).astype(wire_dtype(t.dtype)),
                allow_pickle=False)
    aliases = dict(case.aliases)
    for t in case.outputs:
        if t.name in aliases:
            files[t.name] = files[aliases[t.name]]
            continue
        files[t.name] = folder / f"{t.name}.npy"
        np.save(files[t.name], np.ascontiguousarray(buffers[t.name]).astype(wire_dtype(t.dtype)),
                allow_pickle=False)
    request = {"type": "run", "seq": seq, "id": case.id, "operator": case.operator, "dtype": case.dtype.name,
               "level": case.level.short, "layout": case.layout.value,
               "attributes": {n: _attribute(v) for n, v in case.attributes},
               "aliases": [list(a) for a in case.aliases], "expect_supported": case.expect_supported,
               "inputs": [tensor(t, files[t.name]) for t in case.inputs],
               "outputs": [tensor(t, files[t.name]) for t in case.outputs]}
    return request, files


def _answer(reply: Mapping[str, Any], case: Case, buffers: Mapping[str, np.ndarray],
            files: Mapping[str, Path]) -> None:
    """Act on a ``result`` reply: copy the output files into the buffers, or
    raise `NotSupportedError` / `ExternalBackendError`."""
    status = reply.get("status")
    if status == "not_supported":
        raise NotSupportedError(str(reply.get("reason") or "not supported"))
    if status == "error":
        raise ExternalBackendError(str(reply.get("message") or "the program reported an error"))
    if status != "ok":
        raise ExternalProtocolError(f'status={status!r}: expected "ok", "not_supported" or "error" '
                                    f"({_short(reply)})")
    for t in case.outputs:
        buffer = buffers[t.name]
        want = wire_dtype(t.dtype)
        try:  # the header checked before anything is allocated, as for a case folder's files
            array = read_npy(files[t.name], want, buffer.size)
        except LocatedError as exc:
            raise ExternalProtocolError(f"output {t.name}: {files[t.name].name}: {exc.message}") from None
        if array.size != buffer.size:
            raise ExternalProtocolError(f"output {t.name}: expected a 1-D {want.str} array of {buffer.size} "
                                        f"elements, the program left shape={array.shape} dtype={array.dtype.str}")
        buffer[...] = array.astype(buffer.dtype)
