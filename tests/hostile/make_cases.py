"""Writes the hostile case folders under ``tests/hostile/cases/``: small case
folders (one or a few cases of a few elements) that `run --cases` must refuse
as input errors, one concern per folder, before anything runs
(dmlconform/case_folders.py; tests/test_case_folders.py).  The folders are
committed; this script is how they were made and how to remake them after a
change of the case format::

    python -m tests.hostile.make_cases

Each folder is written by `write_cases` from plain `Case` records, then its
manifest is edited as text where the writer cannot say the hostile thing
(a NaN token).  A fuzz corpus can start from these folders.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dmlconform.cases.model import Case, Layout, TensorData, packed_strides
from dmlconform.cases.store import MANIFEST, write_cases
from dmlconform.spec.model import DataType, FeatureLevel

ROOT = Path(__file__).parent / "cases"
F32 = DataType.FLOAT32
SHRINK = (("Bias", 0.0), ("Threshold", 0.5))


def tensor(name: str, sizes: tuple[int, ...] = (4,), *, dtype: DataType = F32,
           strides: tuple[int, ...] | None = None, count: int | None = None) -> TensorData:
    """A tensor of ``sizes`` (packed unless ``strides``), values 0, 1, 2, ..."""
    strides = packed_strides(sizes) if strides is None else strides
    need = count if count is not None else 1 + sum((s - 1) * t for s, t in zip(sizes, strides)) if all(sizes) else 0
    values = np.arange(need).astype(np.dtype(dtype.name.lower()))
    return TensorData(name, dtype, sizes, strides, values)


def case(case_id: str, operator: str = "ACTIVATION_SHRINK", *, dtype: DataType = F32,
         inputs: tuple[TensorData, ...] | None = None, outputs: tuple[TensorData, ...] | None = None,
         attributes: tuple[tuple[str, object], ...] = SHRINK, **others: object) -> Case:
    """A case of ``operator`` (default: ACTIVATION_SHRINK over 4 floats)."""
    return Case(id=case_id, operator=operator, level=FeatureLevel.FL_6_4, dtype=dtype,
                inputs=(tensor("InputTensor"),) if inputs is None else inputs,
                outputs=(tensor("OutputTensor"),) if outputs is None else outputs,
                attributes=attributes, **others)  # type: ignore[arg-type]


GOOD = case("ACTIVATION_SHRINK/FLOAT32/1d/good")


def folders() -> dict[str, list[Case]]:
    """Folder name -> its cases."""
    return {
        "good": [GOOD],
        "unknown_operator": [GOOD, case("ACTIVATION_SHRNK/FLOAT32/1d/typo", "ACTIVATION_SHRNK")],
        "dtype_contradicts": [case("ACTIVATION_SHRINK/FLOAT16/1d/all-float32", dtype=DataType.FLOAT16)],
        "duplicate_ids": [GOOD, GOOD, case("x"), case("x")],
        "bad_attributes": [
            case("shrink/misspelt", attributes=(("Bias", 0.0), ("Thresh", 0.5))),
            case("shrink/wrong-types", attributes=(("Bias", True), ("Threshold", "half"))),
            case("shrink/range", attributes=(("Bias", 1e300), ("Threshold", "1/0"))),
            case("shrink/huge-exact-text", attributes=(("Bias", 0.0), ("Threshold", "1e999999999"))),
            case("infinity/no-such-constant", "ELEMENT_WISE_IS_INFINITY", outputs=(tensor("OutputTensor",
                 dtype=DataType.UINT8),), attributes=(("InfinityMode", "DML_IS_INFINITY_MODE_SIDEWAYS"),)),
            case("infinity/number", "ELEMENT_WISE_IS_INFINITY", outputs=(tensor("OutputTensor",
                 dtype=DataType.UINT8),), attributes=(("InfinityMode", 1),)),
        ],
        "nan_attribute": [case("shrink/nan", attributes=(("Bias", 0.0), ("Threshold", 12345.5)))],
        "missing_tensors": [
            case("shrink/no-output", outputs=()),
            case("shrink/extra-input", inputs=(tensor("InputTensor"), tensor("BiasTensor"))),
            case("shrink/output-as-input", inputs=(tensor("InputTensor"), tensor("OutputTensor"))),
            case("shrink/twice", inputs=(tensor("InputTensor"), tensor("InputTensor"))),
        ],
        "bad_aliases": [
            case("shrink/alias-to-nothing", aliases=(("OutputTensor", "Nope"),), layout=Layout.IN_PLACE),
            case("shrink/output-to-output", aliases=(("OutputTensor", "OutputTensor"),), layout=Layout.IN_PLACE),
            case("gelu/not-in-place", "ACTIVATION_GELU", attributes=(), aliases=(("OutputTensor", "InputTensor"),),
                 layout=Layout.IN_PLACE),
            case("shrink/other-strides", outputs=(tensor("OutputTensor", strides=(2,)),),
                 aliases=(("OutputTensor", "InputTensor"),), layout=Layout.IN_PLACE),
        ],
        "inconsistent_sizes": [
            case("shrink/4-to-5", outputs=(tensor("OutputTensor", (5,)),)),
            case("add/transposed", "ELEMENT_WISE_ADD", attributes=(), inputs=(tensor("ATensor", (2, 3)),
                 tensor("BTensor", (3, 2))), outputs=(tensor("OutputTensor", (2, 3)),)),
            case("shrink/huge-broadcast", inputs=(tensor("InputTensor", (1 << 40,), strides=(0,)),)),
        ],
        "bad_shapes": [
            case("shrink/0d", inputs=(tensor("InputTensor", ()),), outputs=(tensor("OutputTensor", ()),)),
            case("shrink/empty", inputs=(tensor("InputTensor", (0,)),), outputs=(tensor("OutputTensor", (0,)),)),
            case("shrink/output-overlaps", outputs=(tensor("OutputTensor", (4,), strides=(0,)),)),
        ],
        "many_problems": [case(f"shrink/{i:02d}", dtype=DataType.INT8) for i in range(25)],
        "index_output_float32": [
            case("argmax/float32-indices", "ARGMAX", inputs=(tensor("InputTensor", (2, 3)),),
                 outputs=(tensor("OutputTensor", (2, 1)),), attributes=ARGMAX),
            case("top_k/float32-indices", "TOP_K1", inputs=(tensor("InputTensor", (2, 3)),),
                 outputs=(tensor("OutputValueTensor", (2, 2)), tensor("OutputIndexTensor", (2, 2))),
                 attributes=TOP_K),
        ],
        "flipped_expect_supported": [
            case("shrink/float64-claimed", dtype=DataType.FLOAT64, inputs=(tensor("InputTensor", dtype=DataType.FLOAT64),),
                 outputs=(tensor("OutputTensor", dtype=DataType.FLOAT64),)),
            case("shrink/9d-claimed", inputs=(tensor("InputTensor", (1,) * 8 + (4,)),),
                 outputs=(tensor("OutputTensor", (1,) * 8 + (4,)),)),
        ],
        "huge_contraction": [gemm(f"gemm/k1e{e}-by-broadcast", 10 ** e) for e in (9, 8)],
    }


#: ARGMAX over the last axis of a 2-D input, TOP_K1 of 2 along it.
ARGMAX = (("AxisCount", 1), ("Axes", "1"), ("AxisDirection", "DML_AXIS_DIRECTION_INCREASING"))
TOP_K = (("Axis", 1), ("K", 2), ("AxisDirection", "DML_AXIS_DIRECTION_DECREASING"))


def gemm(case_id: str, k: int) -> Case:
    """A 2x2 GEMM whose A (2 x k) and B (k x 2) are one value each, repeated
    by stride 0: a few bytes of files for 4k terms of work."""
    operands = (tensor("ATensor", (2, k), strides=(0, 0), count=1), tensor("BTensor", (k, 2), strides=(0, 0), count=1))
    return case(case_id, "GEMM", inputs=operands, outputs=(tensor("OutputTensor", (2, 2)),),
                attributes=(("TransA", "DML_MATRIX_TRANSFORM_NONE"), ("TransB", "DML_MATRIX_TRANSFORM_NONE"),
                            ("Alpha", 1.0), ("Beta", 0.0)))


def _nan(folder: Path) -> None:
    """JSON has no NaN; Python's reader takes the token all the same."""
    path = folder / MANIFEST
    path.write_text(path.read_text(encoding="utf-8").replace("12345.5", "NaN"), encoding="utf-8")


def main() -> None:
    for name, cases in folders().items():
        folder = ROOT / name
        folder.mkdir(parents=True, exist_ok=True)
        write_cases(cases, folder)
        if name == "nan_attribute":
            _nan(folder)
        print(f"wrote {folder}")


if __name__ == "__main__":
    main()
