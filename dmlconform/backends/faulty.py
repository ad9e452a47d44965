"""``faulty``: the CPU reference with planted faults, chosen by
``--backend-arg faults=NAME,NAME``.

A self-test backend that anyone can run from a fresh clone: it shows what a
failing backend looks like in every report, drives the baseline worked
example of the README, and is the mutant check of the default suite
(tests/test_mutants.py: each fault must be caught, by name).  Each fault
breaks one thing after the reference has computed (or, for
``rejects-float16``, before).  DESIGN.md "The oracle and the CPU reference
are two things".
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.backends.base import BackendInfo, NotSupportedError, OptionsRequired, Support
from dmlconform.backends.cpu import CpuBackend
from dmlconform.cases.model import Buffers, Case, Fault, writable_view
from dmlconform.errors import InputError
from dmlconform.families import faults as family_faults
from dmlconform.spec import model as m


def _writable_output(case: Case, buffers: Buffers) -> np.ndarray:
    """The first output's logical view over its buffer, writable."""
    return writable_view(case.outputs[0], buffers[case.outputs[0].name])


def _outputs(case: Case, buffers: Buffers, *, floats_only: bool = False) -> list[np.ndarray]:
    """Every output's logical view over its buffer, writable (only the float ones where ``floats_only``)."""
    return [writable_view(out, buffers[out.name]) for out in case.outputs if out.dtype.is_float or not floats_only]


def one_ulp(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Every finite float result one ULP up."""
    if case.dtype.is_float:
        y = _writable_output(case, buffers)
        finite = np.isfinite(y)
        y[finite] = np.nextafter(y[finite], np.array(np.inf, y.dtype))


def nan_to_zero(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """NaN results written as 0."""
    if case.dtype.is_float:
        y = _writable_output(case, buffers)
        y[np.isnan(y)] = 0


def wrong_in_8d(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Right everywhere except in 8-D tensors, where the first element is off."""
    if case.dimension_count == 8:
        y = _writable_output(case, buffers)
        y.flat[0] = y.flat[0] + y.dtype.type(1) if not np.isnan(y.flat[0]) else y.dtype.type(1)


def in_place_corrupting(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """In-place cases computed element by element in the wrong direction: the
    output overwrites inputs that later elements still read."""
    if case.aliases:
        y = _writable_output(case, buffers)
        if y.size > 1:
            y.flat[1:] = y.flat[:-1].copy()


def zero_output(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Every element of every output written as 0 (a kernel that never ran)."""
    for y in _outputs(case, buffers):
        y[...] = 0


def negate_output(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Every element of every output negated (integers wrap, as C's unary minus)."""
    for y in _outputs(case, buffers):
        y[...] = np.negative(y) if y.dtype.kind != "b" else ~y


def scaled_output(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Every float output times 1 + 2^-8 (a scale applied twice, a wrong constant)."""
    for y in _outputs(case, buffers, floats_only=True):
        y[...] = (y.astype(np.float64) * (1 + 2.0 ** -8)).astype(y.dtype)


def nan_output(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """Every float output NaN."""
    for y in _outputs(case, buffers, floats_only=True):
        y[...] = np.nan


def input_copied(spec: m.Spec, case: Case, buffers: Buffers) -> None:
    """The first input written to the first output where their sizes and
    types agree (a pass-through kernel: between two types the copy would be
    a conversion, which is CAST itself)."""
    if case.inputs and case.outputs and case.inputs[0].sizes == case.outputs[0].sizes and \
            case.inputs[0].dtype is case.outputs[0].dtype:
        y = _writable_output(case, buffers)
        y[...] = case.inputs[0].view().astype(y.dtype)  # its own values, not the buffer an in-place output overwrote



#: The faults that break any operator, by name; each family adds its own (`families.faults`).
GENERIC: Mapping[str, Fault] = {
    "one-ulp": one_ulp,
    "nan-to-zero": nan_to_zero,
    "wrong-in-8d": wrong_in_8d,
    "in-place-corrupting": in_place_corrupting,
    "zero-output": zero_output,
    "negate-output": negate_output,
    "scaled-output": scaled_output,
    "nan-output": nan_output,
    "input-copied": input_copied,
}
#: Every planted fault by name: the generic ones and each family's.
BREAKS: Mapping[str, Fault] = {**GENERIC, **family_faults()}

REJECTS_FLOAT16 = "rejects-float16"

#: Every fault name, sorted.
FAULTS: tuple[str, ...] = tuple(sorted([*BREAKS, REJECTS_FLOAT16]))


def parse_faults(text: str) -> tuple[str, ...]:
    """``"nan-to-zero, wrong-in-8d"`` -> the names, sorted and unique
    (``_`` may stand for ``-``); an unknown name is a ValueError listing the known ones."""
    names = sorted({part.strip().replace("_", "-") for part in text.split(",") if part.strip()})
    unknown = [n for n in names if n not in FAULTS]
    if unknown:
        raise ValueError(f"unknown fault(s) {', '.join(unknown)}; known: {', '.join(FAULTS)}")
    return tuple(names)


class FaultyBackend(CpuBackend):
    """The CPU reference with the faults named in ``faults`` (comma-separated).

    Naming none is a usage error listing them (as the external backend
    without ``cmd=``), rather than a clean run or a run of all of them: a
    run that plants nothing passes and looks like a test of something, and
    all the faults at once make most cases fail for mixed reasons, which
    shows nothing a single named fault does not show better.  ``cpu`` is
    this backend without faults.
    """

    def __init__(self, faults: str = "", feature_level: str | m.FeatureLevel | None = None) -> None:
        super().__init__(feature_level)
        try:
            self.faults = parse_faults(faults)
        except ValueError as exc:  # a bad --backend-arg faults=: usage, exit 2
            raise InputError(f"faulty backend: faults={faults!r}: {exc}") from None
        if not self.faults:
            raise OptionsRequired(f"faulty backend: name the faults to plant: --backend-arg faults=NAME[,NAME...] "
                                  f"(known: {', '.join(FAULTS)}); the cpu backend is this one without faults",
                                  summary=f"needs --backend-arg faults=NAME[,NAME...], from {len(FAULTS)} planted "
                                          "faults ('dmlconform backends faulty' lists them); the cpu backend is "
                                          "this one without faults")

    def info(self) -> BackendInfo:
        base = super().info()
        planted = ", ".join(self.faults) or "none"
        return BackendInfo(name="faulty", device=f"{base.device}, planted faults: {planted}", version=base.version,
                           feature_level=base.feature_level, flush_subnormals=False)

    def supports(self, spec: m.Spec, case: Case) -> Support:
        if REJECTS_FLOAT16 in self.faults and case.dtype is m.DataType.FLOAT16:
            return Support(False, "FLOAT16 is not implemented")
        return super().supports(spec, case)

    def run(self, spec: m.Spec, case: Case, buffers: Buffers) -> None:
        if REJECTS_FLOAT16 in self.faults and case.dtype is m.DataType.FLOAT16:
            raise NotSupportedError("FLOAT16 is not implemented")
        super().run(spec, case, buffers)
        with np.errstate(all="ignore"):
            for name in self.faults:
                if name in BREAKS:
                    BREAKS[name](spec, case, buffers)

