"""The contraction family on onnxruntime: GEMM, MATRIX_MULTIPLY_INTEGER and
MATRIX_MULTIPLY_INTEGER_TO_FLOAT as small ONNX models (issue #24 item 5).

The element-wise mappings of `backends.onnxruntime.backend` flatten every
tensor to 1-D; a contraction cannot be, so its mappings name `run` as their
``runner`` (`backends.onnxruntime.shaped`): each case's operands are read through
their sizes and strides into dense arrays of their logical shape, a model
is built for the case (its session cached by the backend under the model's
bytes) and run, and the result is written back through the output's
strides.  Only what ONNX expresses exactly is mapped;
everything else is NOT_SUPPORTED with the reason:

* GEMM -> ``Gemm`` (opset 13: transA, transB, alpha, beta, C broadcast
  unidirectionally), once per matrix of the batch (ONNX's Gemm is 2-D);
  with FusedActivation -> ``com.microsoft.FusedGemm`` (Relu, LeakyRelu,
  Sigmoid, Tanh: ACTIVATION_LINEAR has no equivalent);
* MATRIX_MULTIPLY_INTEGER -> ``MatMulInteger`` (opset 10): A's zero point
  per tensor only (onnxruntime's CPU kernel refuses a per-row one), B's per
  tensor or per column;
* MATRIX_MULTIPLY_INTEGER_TO_FLOAT -> ``com.microsoft.MatMulIntegerToFloat``
  (its a_scale is per tensor or per *column of A*, which is not DirectML's
  per row: per tensor only), Bias through a following ``Add`` (the contrib
  op's bias is 1-D: one more float rounding, within the K + 3 of the bound).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime.node import OnnxMapping, every_attribute
from dmlconform.backends.onnxruntime.shaped import Sessions, write_output
from dmlconform.cases.model import Case
from dmlconform.families.contraction.cases import activation, operands, scales, semantics_of, transposed
from dmlconform.families.contraction.cases_integer import quantized_operands
from dmlconform.spec.model import Spec, numpy_dtype

#: FusedGemm's activation names for the DirectML ones it has.
_FUSED = {"ACTIVATION_RELU": "Relu", "ACTIVATION_LEAKY_RELU": "LeakyRelu", "ACTIVATION_SIGMOID": "Sigmoid",
          "ACTIVATION_TANH": "Tanh"}


@dataclass(frozen=True, slots=True)
class Model:
    """One case as ONNX nodes: ``nodes`` (op type, domain, inputs, outputs,
    attributes), the feeds of each run (one per batch matrix for Gemm) and
    how the runs' outputs stack into the case's output."""

    nodes: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...], Mapping[str, Any]], ...]
    runs: tuple[dict[str, np.ndarray], ...]
    out_dtype: np.dtype
    opsets: tuple[tuple[str, int], ...] = (("", 13),)


def _dense(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x)


def gemm(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray] | None) -> Model:
    sem = semantics_of(spec)
    ops = operands(sem, case, None if buffers is None else dict(buffers))
    alpha, beta = scales(sem, case)
    trans_a, trans_b = transposed(case, sem.a.transform), transposed(case, sem.b.transform)
    stored_a = np.swapaxes(ops.a, -1, -2) if trans_a else ops.a
    stored_b = np.swapaxes(ops.b, -1, -2) if trans_b else ops.b
    lead = ops.a.shape[:-2]
    attrs: dict[str, Any] = {"alpha": alpha, "beta": beta, "transA": int(trans_a), "transB": int(trans_b)}
    opsets: tuple[tuple[str, int], ...] = (("", 13),)
    op, domain = "Gemm", ""
    fused = activation(sem, case)
    if fused is not None:
        if fused.operator not in _FUSED:
            raise NotSupportedError(f"FusedActivation {fused.operator}: FusedGemm has no such activation")
        op, domain, opsets = "FusedGemm", "com.microsoft", (("", 13), ("com.microsoft", 1))
        attrs["activation"] = _FUSED[fused.operator]
        attrs.update({f"activation_{k.lower()}": v for k, v in fused.attributes})  # LeakyRelu's Alpha
    names = ("A", "B") + (("C",) if ops.c is not None else ())
    runs = []
    for index in np.ndindex(*lead):
        feed = {"A": _dense(stored_a[index]), "B": _dense(stored_b[index])}
        if ops.c is not None:
            feed["C"] = _dense(np.broadcast_to(ops.c, ops.a.shape[:-1] + (ops.b.shape[-1],))[index])
        runs.append(feed)
    return Model(((op, domain, names, ("Y",), attrs),), tuple(runs), numpy_dtype(case.outputs[0].dtype), opsets)


def integer(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray] | None) -> Model:
    sem = semantics_of(spec)
    q = quantized_operands(sem, case, None if buffers is None else dict(buffers))
    scaled = q.a_scale is not None
    feed: dict[str, np.ndarray] = {"A": _dense(q.a), "B": _dense(q.b)}
    for name, x, side in (("a_zero_point", q.a_zero, "a"), ("b_zero_point", q.b_zero, "b"),
                          ("a_scale", q.a_scale, "a"), ("b_scale", q.b_scale, "b")):
        if x is not None:
            feed[name] = _per(name, x, side)
    if scaled:
        order = ("A", "B", "a_scale", "b_scale", "a_zero_point", "b_zero_point")
        node: Any = ("MatMulIntegerToFloat", "com.microsoft", _present(order, feed),
                     ("Y0" if q.bias is not None else "Y",), {})
        nodes: tuple[Any, ...] = (node,)
        if q.bias is not None:
            feed["bias"] = _dense(np.broadcast_to(q.bias, q.a.shape[:-1] + (q.b.shape[-1],)))
            nodes += (("Add", "", ("Y0", "bias"), ("Y",), {}),)
        return Model(nodes, (feed,), numpy_dtype(case.outputs[0].dtype), (("", 13), ("com.microsoft", 1)))
    inputs = _present(("A", "B", "a_zero_point", "b_zero_point"), feed)
    return Model((("MatMulInteger", "", inputs, ("Y",), {}),), (feed,), np.dtype(np.int32))


def _present(order: tuple[str, ...], feed: Mapping[str, np.ndarray]) -> tuple[str, ...]:
    """The node's inputs in ONNX's order, "" for an optional one left out before a given one."""
    names = [n if n in feed else "" for n in order]
    while names and names[-1] == "":
        names.pop()
    return tuple(names)


def _per(name: str, x: np.ndarray, side: str) -> np.ndarray:
    """A zero point or scale as ONNX takes it: a scalar (per tensor), or for
    B one value per column ([N]); A's per-row values have no ONNX form."""
    if x.size == 1:
        return np.ascontiguousarray(x.reshape(()))
    if side == "a":
        raise NotSupportedError(f"{name} per row: onnxruntime takes A's {name.split('_', 1)[1].replace('_', ' ')} "
                                "per tensor only")
    return np.ascontiguousarray(x.reshape(-1))


#: Spec operator -> the model of a case.
MODELS: dict[str, Callable[[Spec, Case, Mapping[str, np.ndarray] | None], Model]] = {
    "GEMM": gemm, "MATRIX_MULTIPLY_INTEGER": integer, "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": integer,
}
#: The spec operators mapped here, with the standard ONNX operator the backend's table names (the nodes
#: themselves may be com.microsoft's FusedGemm or MatMulIntegerToFloat, which `run`'s own errors name).
MAPPED = {"GEMM": "Gemm", "MATRIX_MULTIPLY_INTEGER": "MatMulInteger",
          "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": "MatMulInteger"}
NOTE = ("Gemm per batch matrix (FusedGemm with an activation); MatMulInteger; MatMulIntegerToFloat with A's "
        "zero point and scale per tensor only")


def check(spec: Spec, case: Case) -> None:
    """NotSupportedError where no model expresses ``case`` (the mapping's ``check``)."""
    MODELS[spec.operator](spec, case, None)


def run(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray], sessions: Sessions) -> None:
    """``case`` through its model (its session from ``sessions``, the
    backend's cache); a model onnxruntime cannot run is a NotSupportedError
    naming why."""
    model = MODELS[spec.operator](spec, case, buffers)
    onnx_model = _onnx_model(spec, model)
    session = sessions.get((spec.operator, onnx_model.SerializeToString()), lambda: onnx_model, model.nodes[0][0])
    try:
        results = [session.run(None, feed)[0] for feed in model.runs]
    except Exception as exc:  # a missing kernel, type or shape is a clean rejection
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NotSupportedError(f"{sessions.runtime}: {model.nodes[0][0]} on {case.dtype.name}: {text}") from exc
    target = case.outputs[0]
    write_output(target, buffers, np.stack(results) if len(results) > 1 else results[0])


def _onnx_model(spec: Spec, model: Model) -> Any:
    """The ONNX model of ``model``: its inputs those of its first run, untyped in shape; output ``Y``."""
    from onnx import helper  # noqa: PLC0415 - optional (the [onnxruntime] extra): only this backend's runs

    first = model.runs[0]
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), None) for n, v in first.items()]
    out = helper.make_tensor_value_info("Y", helper.np_dtype_to_tensor_dtype(model.out_dtype), None)
    nodes = [helper.make_node(op, list(ins), list(outs), domain=domain or None, **attrs)
             for op, domain, ins, outs, attrs in model.nodes]
    graph = helper.make_graph(nodes, spec.operator, inputs, [out])
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in model.opsets])
    onnx_model.ir_version = 9
    return onnx_model


#: The operators this adapter maps (`backend.MAPPINGS` merges them).
MAPPINGS: Mapping[str, OnnxMapping] = {op: OnnxMapping(t, attrs=every_attribute, runner=run, check=check, note=NOTE)
                                        for op, t in MAPPED.items()}
