"""The ``directml`` backend: cases run by the real DirectML on a GPU.

DESIGN.md, "Backends".  Options (``--backend-arg``): ``dml_path`` (DirectML.dll
/ libdirectml.so; default ``DML_PATH``, else the copy onnxruntime-directml or
torch-directml ships), ``feature_level`` (the minimum passed to
DMLCreateDevice1; default 1_0, and the backend then claims the library's
highest level) and ``stack`` (the folder of the Linux CPU stack that
``dmlconform directml setup-linux`` builds, issue #25: the cases then run in a
worker process through it, `stack_client`; without ``dml_path`` or
``stack``, a Linux machine without WSL's GPU uses the stack in the default
cache when it is there) and ``mesa`` (whose lavapipe the stack runs on,
``host`` or ``sid``, `linux_stack.MESAS`; default host: with sid's, which
flushes float32 subnormals to zero, ``info()`` declares the flushing).
Where the library, D3D12 or a GPU adapter is missing, ``info()`` says
``available=False`` with the reason; it never raises for it.
``supports`` answers from the spec; the library itself judges each desc, and a
desc it rejects (CreateOperator E_INVALIDARG) becomes NotSupportedError.
"""

from __future__ import annotations

import ctypes as C
import functools
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

import dmlconform
from dmlconform.backends.base import SUPPORTED, BackendInfo, NotSupportedError, Support, level_option, unknown_options
from dmlconform.backends.directml import abi
from dmlconform.backends.directml.com import DEVICE_LOST, ComError, Convention, DeviceRemovedError
from dmlconform.backends.directml.descs import DescError, TensorLayout, build, nested_texts
from dmlconform.backends.directml.execute import Entry, Session, TensorIO
from dmlconform.backends.directml.library import Located, Unavailable, locate
from dmlconform.backends.directml.linux_stack import MANIFEST, MESAS, SETUP_HINT, Stack, default_stack_dir
from dmlconform.backends.directml.stack_client import StackClient
from dmlconform.cases.model import Case, TensorData, array_tensors
from dmlconform.catalog import load_spec
from dmlconform.errors import InputError
from dmlconform.packaged import shipped_specs
from dmlconform.spec.model import DataType, FeatureLevel, Field, FieldKind, Spec

_NEWEST = max(FeatureLevel)


def load_entry(located: Located, conv: Convention) -> Entry:
    """Load D3D12 and DirectML (on WSL, DXCore and D3D12 first with
    RTLD_GLOBAL, so libdirectml.so's NEEDED entries resolve to them)."""
    mode = getattr(C, "RTLD_GLOBAL", 0)
    if not located.windows:
        for dep in (located.dxcore, located.d3d12):
            C.CDLL(str(dep), mode=mode)
    loader = getattr(C, "WinDLL", C.CDLL) if located.windows else C.CDLL
    d3d12, dml = loader(str(located.d3d12)), loader(str(located.dml))
    create, create1 = d3d12.D3D12CreateDevice, dml.DMLCreateDevice1
    create.restype = create1.restype = C.c_int32
    create.argtypes = [C.c_void_p, C.c_int32, C.POINTER(abi.Guid), C.POINTER(C.c_void_p)]
    create1.argtypes = [C.c_void_p, C.c_int32, C.c_int32, C.POINTER(abi.Guid), C.POINTER(C.c_void_p)]
    return Entry(create, create1)


@functools.cache
def shipped_spec(operator: str) -> Spec:
    """The shipped spec of ``operator`` (a nested desc's: FusedActivation's
    ACTIVATION_LINEAR); DescError where there is none."""
    path = shipped_specs() / f"{operator}.yaml"
    if not path.is_file():
        raise DescError(f"no spec for the nested operator {operator} ({path} is missing)")
    return load_spec(path)


def max_feature_level(session: Session) -> FeatureLevel:
    """IDMLDevice::CheckFeatureSupport(DML_FEATURE_FEATURE_LEVELS) over every level we know."""
    levels = (C.c_int32 * len(FeatureLevel))(*[lv.value for lv in FeatureLevel])
    query = abi.DML_FEATURE_QUERY_FEATURE_LEVELS(len(FeatureLevel), C.addressof(levels))
    data = abi.DML_FEATURE_DATA_FEATURE_LEVELS()
    session.conv.hr(session.dml, abi.IDMLDevice.CheckFeatureSupport, "IDMLDevice::CheckFeatureSupport",
                    (C.c_int32, C.c_uint32, C.c_void_p, C.c_uint32, C.c_void_p), abi.DmlFeature.FEATURE_LEVELS,
                    C.sizeof(query), C.addressof(query), C.sizeof(data), C.addressof(data))
    return FeatureLevel(data.MaxSupportedFeatureLevel)


def _pack(data: np.ndarray, dtype: DataType) -> bytes:
    """Tensor bytes as DirectML reads them: 4-bit types two to a byte, low nibble first."""
    if dtype.bits != 4:
        return data.tobytes()
    nibbles = data.view(np.uint8) & 0x0F
    if nibbles.size % 2:
        nibbles = np.append(nibbles, np.uint8(0))
    return (nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.uint8).tobytes()


def _unpack(raw: bytes, buffer: np.ndarray, dtype: DataType) -> np.ndarray:
    if dtype.bits != 4:
        return np.frombuffer(raw[: buffer.nbytes], dtype=buffer.dtype)
    packed = np.frombuffer(raw, dtype=np.uint8)
    nibbles = np.stack([packed & 0x0F, packed >> 4], axis=1).reshape(-1)[: buffer.size]
    if dtype is DataType.INT4:
        nibbles = np.where(nibbles > 7, nibbles.astype(np.int16) - 16, nibbles)
    return nibbles.astype(buffer.dtype)


class DirectMLBackend:
    """The Backend protocol over DirectML; see the module docstring."""

    def __init__(self, dml_path: str | None = None, feature_level: str | None = None, stack: str | None = None,
                 mesa: str | None = None, **options: str) -> None:
        if options:
            known = ("dml_path", "feature_level", "stack", "mesa")
            raise InputError(f"directml backend: {unknown_options(options, known)}")
        if dml_path and stack:
            raise InputError("directml backend: give dml_path (a GPU's DirectML) or stack (the Linux CPU stack), "
                             "not both")
        if mesa and mesa not in MESAS:
            raise InputError(f"directml backend: mesa={mesa}: not a Mesa the Linux CPU stack knows; give "
                             f"{' or '.join(MESAS)}")
        if dml_path and mesa:
            raise InputError("directml backend: mesa picks the Linux CPU stack's lavapipe; it does not go with "
                             "dml_path (a GPU's DirectML)")
        self.dml_path = dml_path or None
        self.mesa = mesa or "host"
        self.stack = Stack(Path(stack).absolute(), self.mesa) if stack else None
        self._flushes = False
        self._client: StackClient | None = None
        self.requested = level_option("directml", feature_level)
        self.conv = Convention.native()
        self._session: Session | None = None
        self._level: FeatureLevel | None = None
        self._reason: str | None = None
        self._entry: Entry | None = None
        self._device = "DirectML"

    @classmethod
    def with_entry(cls, entry: Entry, conv: Convention, *, feature_level: str | None = None) -> DirectMLBackend:
        """A backend over given exported functions (the tests' fake COM layer)."""
        backend = cls(feature_level=feature_level)
        backend.conv, backend._entry = conv, entry
        return backend

    def _open(self) -> Session | None:
        if self._session is not None or self._reason is not None or self._client is not None:
            return self._session
        try:
            entry = self._entry
            stack = self._stack() if entry is None else None
            if stack is not None:
                self._open_stack(stack)
                return None
            if entry is None:
                located = locate(self.dml_path)
                self._device = f"DirectML ({located.dml})"
                entry = load_entry(located, self.conv)
            minimum = self.requested or FeatureLevel.FL_1_0
            session = Session(entry, self.conv, minimum.value)
            self._level = self.requested or max_feature_level(session)
            self._session = session
        except Unavailable as exc:
            self._reason = str(exc)
        except ComError as exc:
            hint = {"D3D12CreateDevice": " (no D3D12 GPU adapter)",
                    "DMLCreateDevice1": " (the library or the device cannot reach the requested feature level)"}
            self._reason = f"{exc}{hint.get(exc.step, '')}"
        except OSError as exc:
            self._reason = f"cannot load the DirectML/D3D12 libraries: {exc}"
        return self._session

    def _stack(self) -> Stack | None:
        """The Linux CPU stack to run over: the ``stack`` option's, else the
        default cache's where neither DML_PATH nor a WSL GPU is there."""
        if self.stack is not None:
            return self.stack
        if self.dml_path or os.environ.get("DML_PATH") or sys.platform == "win32":
            return None
        try:
            locate()
            return None
        except Unavailable as exc:
            default = Stack(default_stack_dir(), self.mesa)
            if (default.root / MANIFEST).is_file():
                return default
            raise Unavailable(f"{exc}; or, on the CPU: build the Linux stack with `{SETUP_HINT}`") from None

    def _open_stack(self, stack: Stack) -> None:
        """Start the worker over ``stack`` (`Unavailable` where it cannot run)."""
        client = StackClient(stack, self.requested)
        hello = client.start()
        self._client, self._level = client, self.requested or hello.feature_level
        self._flushes = stack.flushes_subnormals
        self._device = hello.device

    def data_type_support(self) -> dict[DataType, bool]:
        """DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT for every data type (in process only)."""
        session = self._open()
        if session is None:
            return {}
        out = {}
        for dtype in DataType:
            query = abi.DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT(dtype.value)
            data = abi.DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT()
            try:
                session.conv.hr(session.dml, abi.IDMLDevice.CheckFeatureSupport, "IDMLDevice::CheckFeatureSupport",
                                (C.c_int32, C.c_uint32, C.c_void_p, C.c_uint32, C.c_void_p),
                                abi.DmlFeature.TENSOR_DATA_TYPE_SUPPORT, C.sizeof(query), C.addressof(query),
                                C.sizeof(data), C.addressof(data))
            except ComError:
                out[dtype] = False
                continue
            out[dtype] = bool(data.IsSupported)
        return out

    def info(self) -> BackendInfo:
        session = self._open()
        level = self._level or self.requested or _NEWEST
        return BackendInfo(name="directml", device=self._device, version=dmlconform.__version__, feature_level=level,
                           flush_subnormals=self._flushes, available=session is not None or self._client is not None,
                           reason=self._reason)

    def supports(self, spec: Spec, case: Case) -> Support:
        if spec.operator_type is None:
            return Support(False, f"{spec.operator} has no operator_type in its spec")
        level = self._level or self.requested or _NEWEST
        if spec.introduced > level:
            return Support(False, f"{spec.operator} is introduced at {spec.introduced}, above {level}")
        return SUPPORTED

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        session = self._open()
        if self._client is not None:
            verdict = self.supports(spec, case)
            if not verdict.supported:
                raise NotSupportedError(verdict.reason)
            self._client.run(spec, case, buffers)
            return
        if session is None:
            raise NotSupportedError(f"directml is unavailable: {self._reason}")
        verdict = self.supports(spec, case)
        if not verdict.supported:
            raise NotSupportedError(verdict.reason)
        layouts = {t.name: TensorLayout(t.dtype, t.sizes, t.strides) for t in (*case.inputs, *case.outputs)}
        arrays = {f.name: [layouts[t.name] for t in in_desc_order((*case.inputs, *case.outputs), f)]
                  for f in spec.tensors if f.kind is FieldKind.TENSOR_ARRAY}  # a desc's array: its tensors in order
        try:
            attributes = nested_texts(spec, dict(case.attributes), shipped_spec)
            built = build(spec, {**layouts, **arrays}, attributes, dtype=case.dtype)
        except DescError as exc:
            raise NotSupportedError(f"cannot build the desc: {exc}") from None
        inputs, outputs = self._io(spec, case, buffers, layouts)
        try:
            results = session.run(built.pointer(), inputs, outputs)
        except ComError as exc:
            if exc.step == "IDMLDevice::CreateOperator" and exc.hresult == abi.E_INVALIDARG:
                raise NotSupportedError(f"DirectML rejected the desc: {exc}") from None
            self._drop_removed(session, exc)
            raise
        for t, raw in zip(self._output_tensors(spec, case), results):
            buffers[t.name][...] = _unpack(raw, buffers[t.name], t.dtype)

    def _drop_removed(self, session: Session, exc: ComError) -> None:
        """Where ``exc`` left the device removed (issue #37): close the
        session, so that the next case opens a new device, and raise
        `DeviceRemovedError` for this case.  Otherwise return."""
        reason = session.removed_reason()
        if exc.hresult not in DEVICE_LOST and reason not in DEVICE_LOST:
            return
        dml_reason = session.dml_removed_reason()
        session.close()
        self._session = None
        raise DeviceRemovedError(exc, reason, dml_reason) from None

    def _output_tensors(self, spec: Spec, case: Case) -> list[TensorData]:
        return [t for f in spec.tensors for t in in_desc_order(case.outputs, f)]

    def _io(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray],
            layouts: Mapping[str, TensorLayout]) -> tuple[list[TensorIO], list[TensorIO]]:
        """Inputs and outputs in desc order; an in-place output names its input."""
        in_fields = [f for f in spec.tensors if f.role is not None and f.role.value == "input"]
        bound: list[TensorData | None] = []
        for f in in_fields:
            bound.extend(in_desc_order(case.inputs, f) or [None])
        index = {t.name: i for i, t in enumerate(bound) if t is not None}
        aliases = dict(case.aliases)
        inputs = []
        for t in bound:
            if t is None:  # an optional input the case leaves out
                inputs.append(TensorIO(None, 0))
                continue
            data = _pack(np.ascontiguousarray(buffers.get(t.name, t.buffer)), t.dtype)
            inputs.append(TensorIO(data, max(layouts[t.name].total_bytes, (len(data) + 3) // 4 * 4)))
        outputs = []
        for f in spec.tensors:
            if f.role is None or f.role.value != "output":
                continue
            present = in_desc_order(case.outputs, f)
            if not present:  # an optional output the case leaves out: bound as NONE, as DirectML counts it
                outputs.append(TensorIO(None, 0))
            for t in present:
                alias = aliases.get(t.name)
                size = max(layouts[t.name].total_bytes, (len(_pack(buffers[t.name], t.dtype)) + 3) // 4 * 4)
                outputs.append(TensorIO(None, size, index[alias] if alias in index else None))
        return inputs, outputs



def in_desc_order(tensors: Sequence[TensorData], f: Field) -> list[TensorData]:
    """The tensors of ``tensors`` that ``f`` binds, as DirectML's binding
    table lists them: a tensor field's one (none where the case leaves it
    out), a tensor array's in index order (`cases.model.array_tensors`)."""
    if f.kind is FieldKind.TENSOR_ARRAY:
        return list(array_tensors(tensors, f.name))
    return [t for t in tensors if t.name == f.name]
