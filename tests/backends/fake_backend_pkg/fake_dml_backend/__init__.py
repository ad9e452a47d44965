"""A third-party backend package as dmlconform sees one: entry points in the
group ``dmlconform.backends`` naming factories.  Used by
tests/backends/test_registry.py, which installs it by copying this folder and
a ``*.dist-info`` made from pyproject.toml into a temporary directory."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dmlconform.backends.base import SUPPORTED, BackendInfo, Support
from dmlconform.cases.model import Case
from dmlconform.spec.model import FeatureLevel, Spec


class FakeBackend:
    """Copies each input to its output (a wrong but well-formed backend)."""

    def __init__(self, *, device: str = "fake device") -> None:
        self.device = device

    def info(self) -> BackendInfo:
        return BackendInfo(name="fake", device=self.device, version="1.2.3", feature_level=FeatureLevel.FL_5_0)

    def supports(self, spec: Spec, case: Case) -> Support:
        return SUPPORTED

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        for out, inp in zip(case.outputs, case.inputs):
            buffers[out.name][...] = buffers[inp.name]


class OfflineBackend(FakeBackend):
    """Loads, but its library is missing on this machine."""

    def info(self) -> BackendInfo:
        return BackendInfo(name="fake-offline", device="none", version="1.2.3", feature_level=FeatureLevel.FL_6_4,
                           available=False, reason="libfake.so not found")


class NotABackend:
    """Has info() but neither supports() nor run()."""

    def info(self) -> BackendInfo:
        return BackendInfo(name="nope", device="none", version="0", feature_level=FeatureLevel.FL_1_0)
