"""An optional output a case leaves out is bound as DML_BINDING_TYPE_NONE in
its desc place (issue #37, item 4): RANDOM_GENERATOR without
OutputStateTensor, bound with one output binding where the operator has
two, had DirectML write nothing (the read-back held stale device memory:
SPIR-V words) and made the next case's CreateOperator remove the device."""

from __future__ import annotations

import numpy as np

from dmlconform.backends.directml.backend import DirectMLBackend
from dmlconform.backends.directml.com import Convention
from dmlconform.backends.directml.descs import TensorLayout
from dmlconform.backends.directml.execute import TensorIO
from dmlconform.families import cases_of
from dmlconform.spec.model import FeatureLevel
from tests.backends.directml.conftest import spec
from tests.backends.directml.fake_com import FakeCom


def _outputs(case_id: str) -> list[TensorIO]:
    """The outputs the backend binds for ``case_id``, in desc order."""
    com = FakeCom()
    backend = DirectMLBackend.with_entry(com.entry, Convention(windows=com.windows))
    (case,) = cases_of(spec("RANDOM_GENERATOR"), FeatureLevel.FL_6_2, seed=0, keep=lambda i, _: i == case_id)
    buffers = {t.name: np.array(t.buffer, copy=True) for t in (*case.inputs, *case.outputs)}
    layouts = {t.name: TensorLayout(t.dtype, t.sizes, t.strides) for t in (*case.inputs, *case.outputs)}
    return backend._io(spec("RANDOM_GENERATOR"), case, buffers, layouts)[1]


def test_an_absent_optional_output_is_bound_as_none() -> None:
    out, state = _outputs("RANDOM_GENERATOR/UINT32/4d/counter=carry32")
    assert out.size == 4 * 120 and (state.data, state.size, state.alias) == (None, 0, None)


def test_a_present_one_has_its_buffer() -> None:
    out, state = _outputs("RANDOM_GENERATOR/UINT32/4d/counter=carry32/state")
    assert (out.size, state.size) == (4 * 120, 4 * 6)
