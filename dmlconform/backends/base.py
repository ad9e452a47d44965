"""The backend protocol: what every implementation under test provides.

DESIGN.md, "Backends".  A backend describes itself, says whether it supports a
case's tensor configuration, and runs a case by writing its outputs into the
buffers it is given (as DirectML writes into bound resources: an in-place case
hands the same array for the output and the input it aliases).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, runtime_checkable

import numpy as np

from dmlconform.cases.model import Case
from dmlconform.spec.model import FeatureLevel, Spec


@dataclass(frozen=True, slots=True)
class BackendInfo:
    """Who is under test.  ``available`` False means the backend cannot run on
    this machine; ``reason`` says why (a missing library, no device)."""

    name: str
    device: str
    version: str
    feature_level: FeatureLevel
    flush_subnormals: bool = False
    available: bool = True
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Support:
    """A backend's answer to "can you run this configuration?"."""

    supported: bool
    reason: str | None = None


SUPPORTED = Support(True)


class NotSupportedError(Exception):
    """Raised by `Backend.run` to reject a configuration cleanly (verdict
    NOT_SUPPORTED): the runner records the reason and goes on."""


class BackendCrashError(Exception):
    """Raised by a backend that runs the implementation out of process (the
    external backend) when that process died on a case: verdict CRASH."""


@runtime_checkable
class Backend(Protocol):
    """What the runner calls.  Options come from ``--backend-arg KEY=VALUE``
    as keyword arguments of the backend's factory."""

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
