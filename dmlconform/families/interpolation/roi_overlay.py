"""The ``roi`` kind of reviewed semantics (ROI_ALIGN, ROI_ALIGN1,
ROI_POOLING): its schema, its record (`families.interpolation.roi_semantics.Roi`)
and its checks against the spec.  `families.Family.overlay` names it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from dmlconform.families.interpolation.roi_semantics import Roi
from dmlconform.spec import model as m
from dmlconform.spec import reviewed_checks as rc

_ENUMS = ("reduction", "mode")
_FLOATS = ("scale_x", "scale_y", "input_offset_field", "output_offset_field", "out_of_bounds")
_UINTS = ("min_samples", "max_samples")
_NUMBER = {"type": "number", "minimum": -1, "maximum": 1}
SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["family", "source", "input", "rois", "output", "scale_x"],
    "properties": {
        "family": {"const": "roi"}, "source": rc.SOURCE,
        **{role: rc.IDENT for role in ("input", "rois", "output", "batch_indices", *_ENUMS, *_FLOATS, *_UINTS,
                                       "align_corners", "pooled_size")},
        "input_offset": _NUMBER, "output_offset": _NUMBER,
    },
}


def build(data: dict[str, Any]) -> Roi:
    """Shape-checked ``semantics`` data -> `Roi`."""
    named = {k: data.get(k) for k in ("batch_indices", *_ENUMS, *_FLOATS[1:], *_UINTS, "align_corners", "pooled_size")}
    return Roi(source=data["source"], input=data["input"], rois=data["rois"], output=data["output"], scale_x=data["scale_x"],
               input_offset=float(data.get("input_offset", 0.5)), output_offset=float(data.get("output_offset", -0.5)),
               **named)


def _is_size_2d(f: m.Field) -> str | None:
    return None if f.kind is m.FieldKind.STRUCT and f.c_type == "DML_SIZE_2D" else "a DML_SIZE_2D"


_CHECKS: tuple[tuple[tuple[str, ...], Callable[[m.Field], str | None]], ...] = (
    *(((role,), rc.is_enum) for role in _ENUMS), *(((role,), rc.is_float) for role in _FLOATS),
    *(((role,), rc.is_uint) for role in _UINTS), (("align_corners",), rc.is_bool), (("pooled_size",), _is_size_2d))


def against_spec(data: dict[str, Any], spec: m.Spec) -> Iterator[rc.Located]:
    """Names, kinds and roles of the fields the semantics name, and every field named."""
    roles = [(("input",), m.TensorRole.INPUT), (("rois",), m.TensorRole.INPUT),
             (("batch_indices",), m.TensorRole.INPUT), (("output",), m.TensorRole.OUTPUT)]
    yield from rc.named_fields(data, spec, roles, _CHECKS).problems
