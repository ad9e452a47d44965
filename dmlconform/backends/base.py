"""The backend protocol: what every implementation under test provides.

DESIGN.md, "Backends".  A backend describes itself, says whether it supports a
case's tensor configuration, and runs a case by writing its outputs into the
buffers it is given (as DirectML writes into bound resources: an in-place case
hands the same array for the output and the input it aliases).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from dmlconform.cases.model import Case, flat_view, joined
from dmlconform.errors import InputError
from dmlconform.spec.model import FeatureLevel, Spec


@dataclass(frozen=True, slots=True)
class BackendInfo:
    """Who is under test.  ``available`` False means the backend cannot run on
    this machine; ``reason`` says why (a missing library, no device).
    ``float16_accumulation``: the operators whose FLOAT16 sums (GEMM's
    products, REDUCE, softmax's and log-softmax's sum, the cumulative tallies)
    the backend accumulates in FLOAT16, a reading the docs leave open
    (``float16-accumulator``): their oracles then bound the error with
    FLOAT16's unit roundoff, not float32's.  A frozenset of operator names
    (a backend whose kernels differ per operator and device, as torch's
    do; ``OPERATOR:VALUE`` for the cases of one enum attribute value), or a
    bool for all of them or none.  A declaration widens the
    bound, so a backend declares only what it does (`declares_float16`).

    ``subset``: the backend implements a subset of DirectML's
    tensor-support tables, not the tables themselves (an engine such as
    onnxruntime or torch, which is no DirectML implementation).  Its
    refusal of a configuration that its level's table supports is then
    NOT_SUPPORTED with its own reason (counted as refused, and no failure
    of the run); from a backend that claims the tables (False: every
    DirectML implementation, the reference) it stays FAIL, a conformance
    failure (`runner`, issue #33 item 4)."""

    name: str
    device: str
    version: str
    feature_level: FeatureLevel
    flush_subnormals: bool = False
    available: bool = True
    reason: str | None = None
    float16_accumulation: bool | frozenset[str] = False
    subset: bool = False

    def __post_init__(self) -> None:
        declared = self.float16_accumulation
        named = declared if isinstance(declared, frozenset) else ()
        if not isinstance(declared, bool | frozenset) or not all(isinstance(op, str) for op in named):
            raise TypeError(f"BackendInfo.float16_accumulation={declared!r}: give True, False or a frozenset "
                            "of operator names")
        if not isinstance(self.subset, bool):
            raise TypeError(f"BackendInfo.subset={self.subset!r}: give True (a subset of the tables) or False")


def declares_float16(declared: bool | frozenset[str], operator: str,
                     attributes: tuple[tuple[str, object], ...] = ()) -> bool:
    """Whether ``declared`` (`BackendInfo.float16_accumulation`) says that
    ``operator``'s FLOAT16 sums accumulate in FLOAT16, for a case with
    ``attributes``: the one reading of the declaration, which the judge
    asks per batch (`judge.Judging`).  A name is an operator (all of its
    cases) or ``OPERATOR:VALUE``, the cases where an attribute has that
    enum value (``REDUCE:DML_REDUCE_FUNCTION_MULTIPLY``: a kernel that
    multiplies in FLOAT16 but sums in float32, as torch's CPU REDUCE)."""
    if isinstance(declared, bool):
        return declared
    return operator in declared or any(f"{operator}:{value}" in declared for _, value in attributes)


def reported_float16(declared: bool | frozenset[str]) -> bool | tuple[str, ...]:
    """``declared`` as a report shows it (`results.RunResult`): True for
    every operator, else the operators sorted (none: empty)."""
    return True if declared is True else tuple(sorted(declared or ()))


@dataclass(frozen=True, slots=True)
class Support:
    """A backend's answer to "can you run this configuration?"."""

    supported: bool
    reason: str | None = None


SUPPORTED = Support(True)


class NotSupportedError(Exception):
    """Raised by `Backend.run` to reject a configuration cleanly (verdict
    NOT_SUPPORTED): the runner records the reason and goes on."""


class DeviceLimitError(NotSupportedError):
    """Raised by `Backend.run` when what runs the implementation lacks what
    the case needs (a shader its D3D12 layer cannot translate, a data type
    its device does not support): NOT_SUPPORTED with the reason even where
    the level's table supports the configuration, since the implementation
    itself never judged it (issue #25)."""


class OptionsRequired(InputError):
    """Raised by a backend's factory that cannot be built without options
    (the external backend's ``cmd=``, the faulty backend's ``faults=``): a
    usage error whose message says everything (``run`` prints it, exit 2),
    and ``summary``, the one line that ``dmlconform backends`` lists it
    with (what to give; where a long list is, how to see it)."""

    def __init__(self, message: str, *, summary: str) -> None:
        super().__init__(message)
        self.summary = summary


class BackendCrashError(Exception):
    """Raised by a backend that runs the implementation out of process (the
    external backend) when that process died on a case: verdict CRASH."""


@runtime_checkable
class Backend(Protocol):
    """What the runner calls.  Options come from ``--backend-arg KEY=VALUE``
    as keyword arguments of the backend's factory.

    Optionally a backend also has ``run_batch`` (`BatchBackend`): the runner
    then hands it the small cases of one operator and tensor names and data
    types in one call, whatever their attributes, instead of one ``run``
    each; and ``implements`` (`ImplementingBackend`): the runner then asks
    once per operator whether the backend implements it at all."""

    def info(self) -> BackendInfo:
        """Name, device, version, claimed feature level, flush policy."""
        ...

    def supports(self, spec: Spec, case: Case) -> Support:
        """Whether the configuration of ``case`` (data types, dimension counts,
        layout) is one this backend accepts at its feature level."""
        ...

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        """Compute ``case``: read the inputs from ``buffers`` (1-D arrays viewed
        through each TensorData's sizes and strides) and write the outputs into
        the output buffers, in place.  Raise NotSupportedError to reject."""
        ...


#: One case of a batch: its spec, the case, and its bound buffers.
BatchItem = tuple[Spec, Case, Mapping[str, np.ndarray]]


@runtime_checkable
class BatchBackend(Backend, Protocol):
    """A backend that can also run many cases in one call (optional).

    The runner (`runner.run_cases`) goes through the cases of a batch one by
    one, calling ``on_start(i)`` before asking ``supports`` and binding the
    buffers (a rejected case is reported at once), then makes one call for
    the supported ones: every case of the call has been started before it,
    so the whole batch is in flight (a worker process that dies or hangs
    during the call has all of them as suspects, and the parallel engine
    re-runs them one by one to find the culprit).  The call's time is split
    evenly among its cases.  The cases of one call share the operator (and
    so their tensors' names, in order); their data types and attributes may
    differ (every combination of the operator comes in one call, so a
    backend can prepare them together).  Cases too large to copy cheaply
    still go through ``run``, which a batch backend keeps for one case."""

    def run_batch(self, items: Sequence[BatchItem]) -> list[Exception | None]:
        """Run every item as ``run`` would, writing its outputs into its
        buffers.  Returns one entry per item, in order: None when it was
        computed; `NotSupportedError` when it is rejected (NOT_SUPPORTED, or
        FAIL for a configuration the table supports from a backend that
        claims the tables: `BackendInfo.subset`); `BackendCrashError`
        when the out-of-process implementation died on it (CRASH); any other
        exception makes that case FAIL with "the backend raised ...".  One
        bad case must not cost the others; an exception raised by the call
        itself is given to every item."""
        ...


@runtime_checkable
class ImplementingBackend(Backend, Protocol):
    """A backend that says which operators it implements at all (optional;
    issue #22 item 5).

    The runner asks ``implements`` once per operator of a run, before any
    of its cases: an operator the backend does not implement makes each of
    its cases NOT_SUPPORTED with the reason given, never FAIL (a backend
    with no mapping for an operator has no bug in it).  A backend without
    the method implements every operator; whatever it then rejects through
    ``supports`` or `NotSupportedError` for a configuration the table
    allows stays FAIL, unless it declares `BackendInfo.subset`."""

    def implements(self, spec: Spec) -> str | None:
        """None when the backend implements ``spec``'s operator; else the
        reason it does not (a sentence a reader acts on: "ONNX has no
        one-node equivalent of X")."""
        ...


#: A backend's ``implements`` method.
Implements = Callable[[Spec], str | None]


def implements_of(backend: Backend) -> Implements | None:
    """``backend``'s ``implements``, or None when it has none (it then
    implements every operator): the method is optional
    (`ImplementingBackend`), like ``run_batch``."""
    return getattr(backend, "implements", None)


#: A backend's ``run_batch`` method.
RunBatch = Callable[[Sequence[BatchItem]], list[Exception | None]]


def run_batch_of(backend: Backend) -> RunBatch | None:
    """``backend``'s ``run_batch``, or None when it has none: the method is
    optional (`BatchBackend`), and a backend may set it to None (say on a
    device where it cannot batch).  The one test of "has run_batch": the
    runner batches exactly when a worker's watcher (`worker._Watched`)
    expects batch calls, so both ask here."""
    return getattr(backend, "run_batch", None)


def joined_input(items: Sequence[BatchItem], j: int) -> np.ndarray:
    """The j-th input of like cases (one operator, tensors and types) end to
    end in their logical order: one flat array (`flat_view` per case,
    `joined`; a single strided case may stay a strided view)."""
    return joined([flat_view(case.inputs[j], buffers[case.inputs[j].name], case.outputs[0].sizes)
                   for _, case, buffers in items])


# -- options ---------------------------------------------------------------------------
def unknown_options(given: Iterable[str], known: Sequence[str]) -> str:
    """What a backend says of ``--backend-arg`` keys it does not know: them,
    the keys it knows and the nearest (a backend raises it as an
    `InputError`, which `registry` turns into exit 2, a bad command line)."""
    names = sorted(given)
    guesses = [near[0] for name in names if (near := difflib.get_close_matches(name, known, n=1))]
    hint = f"; did you mean {', '.join(dict.fromkeys(guesses))}?" if guesses else ""
    return (f"unknown option{'s' if len(names) > 1 else ''} {', '.join(names)} (--backend-arg); "
            f"it knows {', '.join(known) or 'none'}{hint}")


def level_option(backend: str, value: str | FeatureLevel | None) -> FeatureLevel | None:
    """A backend's ``feature_level`` option (None: not given); a level that
    does not exist is an `InputError` naming the option."""
    if isinstance(value, FeatureLevel):
        return value
    if value is None or value == "":
        return None
    try:
        return FeatureLevel.parse(str(value))
    except ValueError as exc:
        raise InputError(f"{backend} backend: feature_level: {exc}") from None
