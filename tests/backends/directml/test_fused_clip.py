"""CONVOLUTION's FusedActivation as ELEMENT_WISE_CLIP: the desc the directml
backend builds (issue #37, item 4: the window family's ``fused=clip`` cases
FAILed as our binding's refusal before)."""

from __future__ import annotations

import re

import pytest

from dmlconform.backends.directml import abi
from dmlconform.backends.directml.descs import DescError, NestedOp, build, desc_struct, nested_texts
from tests.backends.directml.conftest import spec


def test_a_fused_clip_becomes_a_nested_clip_desc_with_its_bounds() -> None:
    attributes = nested_texts(spec("CONVOLUTION"), {"FusedActivation": "ELEMENT_WISE_CLIP(Min=-0.5,Max=0.25)"}, spec)
    nested = attributes["FusedActivation"]
    assert isinstance(nested, NestedOp)
    assert (nested.spec.operator, nested.attributes) == ("ELEMENT_WISE_CLIP", (("Min", "-0.5"), ("Max", "0.25")))
    conv = build(spec("CONVOLUTION"), {}, attributes)
    desc = abi.DML_OPERATOR_DESC.from_address(conv.body.FusedActivation)
    assert desc.Type == spec("ELEMENT_WISE_CLIP").operator_type
    clip = desc_struct(spec("ELEMENT_WISE_CLIP")).from_address(desc.Desc)
    assert (clip.InputTensor, clip.OutputTensor, clip.ScaleBias) == (None, None, None)
    assert (clip.Min, clip.Max) == (-0.5, 0.25)


@pytest.mark.parametrize("text", ["ELEMENT_WISE_ADD", "ELEMENT_WISE_CLIP(Min)", "CLIP(Min=0)"])
def test_other_element_wise_texts_are_still_no_activation(text: str) -> None:
    with pytest.raises(DescError, match=re.escape(f"field FusedActivation: {text!r} is no activation")):
        nested_texts(spec("CONVOLUTION"), {"FusedActivation": text}, spec)
