"""The CPU reference of the sequence family (TOP_K, TOP_K1,
CUMULATIVE_SUMMATION, CUMULATIVE_PRODUCT): plain numpy in the tensor's own
type, float32 for FLOAT16 running tallies (as a GPU does).

Issue #24 item 4; DESIGN.md "The oracle and the CPU reference are two
things".  Written like the ONNX reference implementations of TopK
(``np.argsort(..., kind="stable")``) and CumSum (``np.cumsum`` on the
input shifted for ``exclusive``, flipped for ``reverse``); it shares
nothing with the oracle but the shape rules (`families.sequence.cases.sequences`
and `placed`: the axis moved last and back, and the attributes).  Where
the oracle ranks with sort keys in float64, this one ranks integers made
from the values' bits (-0 made +0, NaN made a positive quiet NaN: above
+inf, the primary readings), and where the oracle shifts the tallies for
the exclusive ones, this one shifts the input.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.families.sequence.cases import attributes_of, placed, semantics_of, sequences
from dmlconform.families.sequence.semantics import Operation
from dmlconform.spec.model import DataType, Spec, numpy_dtype

#: The type each tensor type tallies in: its own, FLOAT16 in float32.
_WORK = {DataType.FLOAT16: np.dtype(np.float32)}


def compute(spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The outputs of ``case`` in their storage types and logical shapes, new arrays."""
    sem = semantics_of(spec)  # the cpu backend dispatches here only for such specs
    a = attributes_of(sem, case)
    x = sequences(sem, case, dict(buffers))
    if sem.operation is Operation.TOP_K:
        values, indices = top_k(x, a.k, largest=not a.increasing)
        types = {t.name: numpy_dtype(t.dtype) for t in case.outputs}
        found = {sem.output: values, **({sem.indices: indices} if sem.indices else {})}
        return {n: placed(sem, case, v).astype(types[n]) for n, v in found.items() if n in types}
    tally = cumulative(x, product=sem.operation is Operation.CUMULATIVE_PRODUCT, reverse=not a.increasing,
                       exclusive=a.exclusive, dtype=case.dtype)
    return {sem.output: placed(sem, case, tally)}


def rank_keys(x: np.ndarray) -> np.ndarray:
    """int64 keys in the order of ``x``'s values: a float's bits as a
    sign-magnitude integer (after -0 -> +0 and NaN -> +NaN), an integer
    itself (uint64 shifted by 2^63)."""
    if x.dtype.kind == "f":
        v = x.astype(np.float64) + 0.0  # -0 + 0 is +0: the two tie
        v[np.isnan(v)] = np.nan  # numpy's NaN is positive: above +inf
        bits = v.view(np.int64)
        return np.where(bits < 0, -(bits & np.int64(np.iinfo(np.int64).max)), bits)
    if x.dtype == np.uint64:
        return (x - np.uint64(2 ** 63)).view(np.int64)
    return x.astype(np.int64)


def top_k(x: np.ndarray, k: int, *, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest (or smallest) of each sequence (last axis) and
    their indices, ties in ascending index (a stable sort)."""
    keys = rank_keys(x)
    order = np.argsort(~keys if largest else keys, axis=-1, kind="stable")[..., :k]  # ~ reverses int64 order
    return np.take_along_axis(x, order, axis=-1), order


def cumulative(x: np.ndarray, *, product: bool, reverse: bool, exclusive: bool, dtype: DataType) -> np.ndarray:
    """The running sum or product of each sequence (last axis), in the
    working type, rounded once to ``dtype``."""
    work = _WORK.get(dtype, numpy_dtype(dtype))
    y = x.astype(work)
    if reverse:
        y = y[..., ::-1]
    if exclusive and y.shape[-1]:
        first = np.ones if product else np.zeros
        y = np.concatenate([first(y.shape[:-1] + (1,), dtype=work), y[..., :-1]], axis=-1)
    with np.errstate(all="ignore"):
        tally = (np.cumprod if product else np.cumsum)(y, axis=-1, dtype=work)
    if reverse:
        tally = tally[..., ::-1]
    return tally.astype(numpy_dtype(dtype))
