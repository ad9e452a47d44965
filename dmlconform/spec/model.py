"""The spec model: frozen records that every stage after `load` works on.

DESIGN.md, "The spec": identity, introduced level, fields in struct order,
formula, in-place aliasing, constraints, support tables per feature level and
tolerance.  YAML becomes these records in `spec/load.py` alone; `spec/store.py`
turns them back into YAML.  Nothing here does I/O.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_LEVEL_RE = re.compile(r"^(?:DML_FEATURE_LEVEL_)?(\d+)_(\d+)$")


@functools.total_ordering
class FeatureLevel(enum.Enum):
    """DirectML feature levels, ordered oldest to newest.  Values are the
    ``DML_FEATURE_LEVEL`` enum constants (0xMm00)."""

    FL_1_0 = 0x1000
    FL_2_0 = 0x2000
    FL_2_1 = 0x2100
    FL_3_0 = 0x3000
    FL_3_1 = 0x3100
    FL_4_0 = 0x4000
    FL_4_1 = 0x4100
    FL_5_0 = 0x5000
    FL_5_1 = 0x5100
    FL_5_2 = 0x5200
    FL_6_0 = 0x6000
    FL_6_1 = 0x6100
    FL_6_2 = 0x6200
    FL_6_3 = 0x6300
    FL_6_4 = 0x6400

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, FeatureLevel):
            return NotImplemented
        return self.value < other.value

    @property
    def short(self) -> str:
        """``"2_0"``: the form used in spec files and on the command line."""
        return self.name[3:]

    @property
    def constant(self) -> str:
        """``"DML_FEATURE_LEVEL_2_0"``: the C constant name."""
        return "DML_FEATURE_LEVEL_" + self.short

    @classmethod
    def parse(cls, text: str) -> FeatureLevel:
        """Accepts ``2_0``, ``2.0`` and ``DML_FEATURE_LEVEL_2_0``; raises ValueError
        naming the known levels otherwise."""
        m = _LEVEL_RE.match(text.strip().replace(".", "_"))
        if m:
            try:
                return cls[f"FL_{m.group(1)}_{m.group(2)}"]
            except KeyError:
                pass
        known = ", ".join(level.short for level in cls)
        raise ValueError(f"unknown feature level {text!r} (known: {known})")

    def __str__(self) -> str:
        return self.short


class DataType(enum.Enum):
    """Tensor data types; values are the ``DML_TENSOR_DATA_TYPE`` constants."""

    FLOAT32 = 1
    FLOAT16 = 2
    UINT32 = 3
    UINT16 = 4
    UINT8 = 5
    INT32 = 6
    INT16 = 7
    INT8 = 8
    FLOAT64 = 9
    UINT64 = 10
    INT64 = 11
    UINT4 = 12
    INT4 = 13

    @property
    def is_float(self) -> bool:
        return self.name.startswith("FLOAT")

    @property
    def is_signed(self) -> bool:
        return not self.name.startswith("UINT")

    @property
    def bits(self) -> int:
        return int(self.name.lstrip("FLOATUIN"))

    @classmethod
    def parse(cls, text: str) -> DataType:
        name = text.strip().upper().removeprefix("DML_TENSOR_DATA_TYPE_")
        try:
            return cls[name]
        except KeyError:
            known = ", ".join(t.name for t in cls)
            raise ValueError(f"unknown data type {text!r} (known: {known})") from None

    def __str__(self) -> str:
        return self.name


#: Canonical display order of data types (the order the docs list them in).
DATA_TYPE_ORDER: tuple[DataType, ...] = (
    DataType.FLOAT64, DataType.FLOAT32, DataType.FLOAT16,
    DataType.INT64, DataType.INT32, DataType.INT16, DataType.INT8, DataType.INT4,
    DataType.UINT64, DataType.UINT32, DataType.UINT16, DataType.UINT8, DataType.UINT4,
)


def sort_dtypes(dtypes: Iterator[DataType] | tuple[DataType, ...] | set[DataType] | frozenset[DataType]) -> tuple[DataType, ...]:
    """Data types in canonical order, duplicates removed."""
    present = set(dtypes)
    return tuple(t for t in DATA_TYPE_ORDER if t in present)


def numpy_dtype(dtype: DataType) -> np.dtype:
    """The numpy dtype a tensor of ``dtype`` is held in (ml_dtypes for 4-bit)."""
    import numpy as np  # noqa: PLC0415 - numpy (~0.1 s) where a tensor is made; extract and lint need none

    if dtype in (DataType.INT4, DataType.UINT4):
        from dmlconform.compare import ml_dtypes_module  # noqa: PLC0415 - as numpy above

        types = ml_dtypes_module()  # imported for these two alone
        return np.dtype(types.int4 if dtype is DataType.INT4 else types.uint4)
    return np.dtype(dtype.name.lower())


class FieldKind(enum.Enum):
    """What a struct member is, which decides how a binding builds it."""

    TENSOR = "tensor"            # const DML_TENSOR_DESC*
    TENSOR_ARRAY = "tensor_array"  # _Field_size_(N) const DML_TENSOR_DESC*
    SCALAR = "scalar"            # FLOAT, UINT, INT, BOOL
    ENUM = "enum"                # DML_* enum value
    ARRAY = "array"              # _Field_size_(N) const UINT* / FLOAT* / INT*
    STRUCT = "struct"            # DML_SCALAR_UNION, DML_SIZE_2D by value
    STRUCT_PTR = "struct_ptr"    # const DML_SCALE_BIAS*, const DML_OPERATOR_DESC*
    STRUCT_ARRAY = "struct_array"  # _Field_size_(N) const DML_OPERATOR_DESC*


class TensorRole(enum.Enum):
    INPUT = "input"
    OUTPUT = "output"


@dataclass(frozen=True, slots=True)
class Domain:
    """The values the doc allows an attribute (issue #22 item 4): "This value
    cannot be less than 1" is ``min=1``; "should be between 0.0 and 1.0" is
    ``min=0, max=1``; "must be greater than 0" is ``min=0,
    min_inclusive=False``.  A bound the doc states through a tensor's
    property ("less than the DimensionCount of the InputTensor") is text in
    ``min_symbol``/``max_symbol`` (``InputTensor.DimensionCount``), not a
    number: the generator and the validator use numeric bounds only.
    ``text`` is the doc's sentence(s), ``source`` ``path:line``.  For an
    array attribute the domain applies to each element."""

    min: float | None = None
    max: float | None = None
    min_inclusive: bool = True
    max_inclusive: bool = True
    min_symbol: str | None = None
    max_symbol: str | None = None
    text: str = ""
    source: str | None = None

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies within the numeric bounds (NaN never does)."""
        if value != value:
            return False
        if self.min is not None and (value < self.min or (value == self.min and not self.min_inclusive)):
            return False
        return not (self.max is not None and (value > self.max or (value == self.max and not self.max_inclusive)))

    def render(self) -> str:
        """``[1, inf)``, ``(0, InputTensor.DimensionCount)``: the bounds in
        interval notation."""
        low = self.min_symbol if self.min_symbol is not None else ("-inf" if self.min is None else f"{self.min:g}")
        high = self.max_symbol if self.max_symbol is not None else ("inf" if self.max is None else f"{self.max:g}")
        left = "[" if self.min_inclusive and (self.min is not None or self.min_symbol) else "("
        right = "]" if self.max_inclusive and (self.max is not None or self.max_symbol) else ")"
        return f"{left}{low}, {high}{right}"


@dataclass(frozen=True, slots=True)
class Field:
    """One struct member, in struct order (the order matters for the C layout).

    ``default`` is the doc's "typical default" as a number (or a bool/enum
    name); ``default_exact`` keeps an exact form such as ``"1/6"`` where the doc
    gives one, so the oracle can use the float32 rounding of the exact value.
    ``domain`` is the range the doc allows (`Domain`), ``typical`` a value the
    doc calls typical without calling it a default ("A value of 0.9f is
    typical"): the generator's value where there is no default.
    """

    name: str
    c_type: str
    kind: FieldKind
    role: TensorRole | None = None
    optional: bool = False
    count_field: str | None = None
    default: float | int | bool | str | None = None
    default_exact: str | None = None
    domain: Domain | None = None
    typical: float | None = None

    @property
    def is_tensor(self) -> bool:
        return self.kind in (FieldKind.TENSOR, FieldKind.TENSOR_ARRAY)


#: A case's name of one tensor of a tensor-array field: ``InputTensors[2]``.
_ELEMENT = re.compile(r"(?P<field>[A-Za-z_][A-Za-z0-9_]*)\[(?P<index>0|[1-9][0-9]{0,8})\]")


def element_name(field: str, index: int) -> str:
    """The name a case gives tensor ``index`` of the tensor-array ``field``
    (JOIN's ``InputTensors[0]``, ``InputTensors[1]``, ...): the one
    convention case generation, case folders, the cpu reference, the
    engines' binding and the reports share (issue #34, docs/index-map.md)."""
    return f"{field}[{index}]"


def split_element(name: str) -> tuple[str, int | None]:
    """A case's tensor name as (the field it binds, its index in the
    field's array; None for a single tensor): ``"InputTensors[2]"`` ->
    ``("InputTensors", 2)``, ``"OutputTensor"`` -> ``("OutputTensor", None)``."""
    match = _ELEMENT.fullmatch(name)
    return (match["field"], int(match["index"])) if match else (name, None)


def field_name(name: str) -> str:
    """The field a case's tensor named ``name`` binds (`split_element`)."""
    return split_element(name)[0]


class FormulaSource(enum.Enum):
    """Where the doc states the formula (INDEX.md's Formula column)."""

    CODE = "code"      # a fenced code block in the description
    INLINE = "inline"  # only inline code in the description
    IMAGE = "image"    # only as a picture: nothing to extract
    EXAMPLE = "example"  # only worked examples (input --> output diagrams), no formula
    NONE = "none"      # prose only


class NanPolicy(enum.Enum):
    """What the oracle does with a NaN input (DESIGN.md, "The oracle")."""

    PROPAGATE = "propagate"  # IEEE: NaN in, NaN out (activations)
    FORMULA = "formula"      # comparisons taken literally: NaN falls into `otherwise`


class Overflow(enum.Enum):
    """Integer results out of range: wrap modulo 2^bits or saturate."""

    WRAP = "wrap"
    SATURATE = "saturate"


@dataclass(frozen=True, slots=True)
class Formula:
    """The doc's formula text verbatim, and its parsed form in the harness's
    expression language (None where the formula engine cannot parse it).

    ``evaluable`` says whether the oracle can compute it element-wise;
    ``reason`` why not (or why it did not parse); ``notes`` what parsing had to
    assume.  ``nan_policy``, ``integer_overflow`` and ``signed_zero`` are
    stated choices where the doc is silent (``signed_zero`` None: derived from
    the doc's own words)."""

    source: FormulaSource
    text: str | None = None
    parsed: str | None = None
    evaluable: bool = False
    reason: str | None = None
    notes: tuple[str, ...] = ()
    nan_policy: NanPolicy = NanPolicy.PROPAGATE
    integer_overflow: Overflow = Overflow.WRAP
    signed_zero: bool | None = None
    reviewed: str | None = None  # `doc path:line` of a formula the reviewed overlay gives (`families.elementwise.semantics`)


@dataclass(frozen=True, slots=True)
class InPlace:
    """``output`` may alias ``input`` during binding."""

    output: str
    input: str


class ConstraintKind(enum.Enum):
    SAME = "same"            # tensors must have the same listed properties
    OTHER = "other"          # a constraint the extractor could not structure


#: Tensor properties a ``same`` constraint can name.
TENSOR_PROPERTIES: tuple[str, ...] = ("DataType", "DimensionCount", "Sizes")


@dataclass(frozen=True, slots=True)
class Constraint:
    """A structured tensor constraint.

    ``same``: every tensor in ``tensors`` has equal ``properties``.
    ``other``: a sentence the extractor could not structure; ``tensors`` and
    ``properties`` list what it mentions, ``doc_line`` where it is in the page.
    """

    kind: ConstraintKind
    tensors: tuple[str, ...]
    properties: tuple[str, ...] = ()
    doc_line: int | None = None


@dataclass(frozen=True, slots=True)
class TensorSupport:
    """One row of a tensor-support table."""

    tensor: str
    kind: str                     # the doc's Kind column, e.g. "Input", "Optional input"
    dims: tuple[int, ...]         # supported dimension counts
    dtypes: tuple[DataType, ...]
    dimensions: str | None = None  # the optional "Dimensions" column, e.g. "{ N, C, H, W }"


@dataclass(frozen=True, slots=True)
class SupportTable:
    """The table in force from ``level`` up to the next newer table.

    ``condition`` names the attribute values the table applies to where the
    doc splits tables by them (``reduce``: ``Function in [ARGMIN, ARGMAX]``).
    """

    level: FeatureLevel
    rows: tuple[TensorSupport, ...]
    condition: Condition | None = None

    def row(self, tensor: str) -> TensorSupport | None:
        return next((r for r in self.rows if r.tensor == tensor), None)


@dataclass(frozen=True, slots=True)
class Condition:
    """``field`` takes one of ``values`` (enum constant suffixes)."""

    field: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Tolerance:
    """Allowed error for one data type: ``ulp`` units in the last place for
    floats (0 = exact, which integers always are)."""

    dtype: DataType
    ulp: int


@dataclass(frozen=True, slots=True)
class SourcePage:
    """One doc page that describes the operator."""

    path: str          # relative to the docs root given to extract
    variant: str       # A (sdk-api), B (windows-ai-docs), C (scraper)
    date: str | None   # ms.date as ISO yyyy-mm-dd


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A fact on which two pages of one operator disagree.

    ``chosen`` and ``other`` are short renderings of the two values (facts,
    never prose: for a section whose text differs they say so and give sizes).
    """

    fact: str
    chosen: str
    other: str
    other_path: str


class AmbiguityKind(enum.Enum):
    """What a doc leaves undecided (docs/ambiguities.md).  Each kind but
    ``other`` names the oracle setting its readings choose (`SETTING_OF`)."""

    NAN = "nan"                                          # NaN through a branch formula
    BRANCH_OVERLAP = "branch-overlap"                    # two branches hold with different values
    INTEGER_FLOAT_ATTRIBUTE = "integer-float-attribute"  # integer tensors, FLOAT attributes
    INTEGER_OVERFLOW = "integer-overflow"                # integer results out of the type's range
    DIVISION_BY_ZERO = "integer-division-by-zero"        # an integer divided by 0
    INFINITE_DIVISOR = "infinite-divisor"                # a float modulus by +-inf
    IEEE_POW = "ieee-pow"                                # pow's IEEE 754 special values
    FLOAT_TO_INTEGER = "float-to-integer-conversion"     # a float out of an integer type's range converted
    SIGNED_ZERO = "signed-zero"                          # the sign of a zero result
    OTHER = "other"                                      # written by hand; not evaluated


class BranchOrder(enum.Enum):
    """Which of two overlapping piecewise branches wins."""

    FIRST = "first-match"  # the first the doc lists (the doc's order read as C's if/else)
    LAST = "last-match"    # the later one (conditions tested in the other order)


class IntegerArithmetic(enum.Enum):
    """How integer tensors meet FLOAT attributes (``x - Bias`` on INT8)."""

    EXACT = "exact"                    # exact rational arithmetic, the result truncated toward zero
    FLOAT64 = "float64"                # computed in double, converted toward zero
    FLOAT32 = "float32"                # computed in float, converted toward zero
    ATTRIBUTE_TO_INTEGER = "attribute-to-integer"  # each FLOAT attribute cast to an integer first


class DivisionByZero(enum.Enum):
    """What an integer division by zero gives (C, ONNX and the docs leave it undefined)."""

    QUOTIENT_ZERO = "quotient-zero"  # a / 0 is 0 (AArch64 SDIV/UDIV): a - b * floor(a / b) gives a
    ZERO = "zero"                    # the result is 0 (numpy's integer // and %)
    ALL_ONES = "all-ones"            # every bit set, -1 or the unsigned maximum (CUDA; 2^32 - 1 for a
    #                                  64-bit dividend in [0, 2^32), CUDA's 32-bit path)


class InfiniteDivisor(enum.Enum):
    """What ``a - b * floor(a / b)`` (or trunc) gives for a finite a and an infinite b."""

    FORMULA = "formula"  # the formula step by step in IEEE arithmetic: inf * 0 is NaN
    FMOD = "fmod"        # C's fmod(a, +-inf) = a; floor mode adds b where the signs differ (numpy, torch)


class IeeePow(enum.Enum):
    """What pow gives at IEEE 754's special values (pow(-inf, 0.5), pow(-1, inf), pow(NaN, 0), ...)."""

    FORMULA = "formula"    # the real x^y: NaN for a negative base to a non-integer power, NaN propagates
    IEEE_754 = "ieee-754"  # IEEE 754-2019 9.2.1 pow, as C's pow (and numpy, torch, onnxruntime) give


class FloatToInteger(enum.Enum):
    """How a float value out of an integer type's range (or NaN) converts (C leaves it undefined)."""

    AS_OVERFLOW = "as-overflow"  # as an exact result out of range: the integer-overflow reading (CUDA's cvt.rzi)
    INDEFINITE = "indefinite"    # x86 scalar cvtt*2si: INT_MIN of int32 (int64 for 64-bit types), low bits kept
    WIDE_SATURATE = "wide-saturate"  # ARM scalar FCVTZS, torch on CUDA: saturated to int32 (int64), low bits, NaN 0
    X86_VECTOR = "x86-vector"    # x86 SSE2/AVX2 loops (gcc -O3, numpy): UINT32 by cvttps2dq with a sign bias
    UNSIGNED_INDEFINITE = "unsigned-indefinite"  # AVX-512 vcvtt*2usi/udq: 2^bits - 1 for UINT32, UINT64
    ARM_UNSIGNED = "arm-unsigned"  # ARM scalar FCVTZU for unsigned types: saturated to uint32 (uint64), low bits
    ARM_VECTOR = "arm-vector"    # ARM NEON loops: FCVTZS/FCVTZU on the source's lanes (64-bit for double), XTN


class SignedZero(enum.Enum):
    """Whether the sign of a zero result counts."""

    EXACT = "exact"    # -0 and +0 are different results
    EITHER = "either"  # either sign is right


#: The reading key (in the spec file) and the setting's values, per kind.
SETTING_OF: dict[AmbiguityKind, tuple[str, type[enum.Enum]]] = {
    AmbiguityKind.NAN: ("nan_policy", NanPolicy),
    AmbiguityKind.BRANCH_OVERLAP: ("branch_order", BranchOrder),
    AmbiguityKind.INTEGER_FLOAT_ATTRIBUTE: ("integer_arithmetic", IntegerArithmetic),
    AmbiguityKind.INTEGER_OVERFLOW: ("integer_overflow", Overflow),
    AmbiguityKind.SIGNED_ZERO: ("signed_zero", SignedZero),
    AmbiguityKind.DIVISION_BY_ZERO: ("division_by_zero", DivisionByZero),
    AmbiguityKind.INFINITE_DIVISOR: ("infinite_divisor", InfiniteDivisor),
    AmbiguityKind.IEEE_POW: ("ieee_pow", IeeePow),
    AmbiguityKind.FLOAT_TO_INTEGER: ("float_to_integer", FloatToInteger),
}


@dataclass(frozen=True, slots=True)
class Reading:
    """One way to read an ambiguity: ``says`` in one line, and ``setting``,
    the value of the oracle setting its kind names (`SETTING_OF`; a value
    of that kind's enum), or None where the harness cannot evaluate it."""

    id: str
    says: str
    setting: enum.Enum | None = None


@dataclass(frozen=True, slots=True)
class Tie:
    """Ambiguities that must take one reading where the doc makes them one
    order (docs/ambiguities.md, "Readings that must agree"): every
    ambiguity of ``group``, in every operator, is a side per operator and,
    where ``by`` names an attribute, per value of it (REDUCE's MAX and
    ARGMAX are two sides of ``nan-max-min``, the ARGMAX operator a third).
    A side may take several readings (element by element, case by case);
    two sides that each took a single reading must take the same one."""

    group: str
    by: str = ""

    def side(self, operator: str, attributes: Mapping[str, object]) -> str:
        """The side a case of ``operator`` with ``attributes`` is on."""
        value = attributes.get(self.by) if self.by else None
        return operator if value is None else f"{operator} {getattr(value, 'name', value)}"


@dataclass(frozen=True, slots=True)
class Ambiguity:
    """Something the doc leaves undecided, with every reading of it.

    ``source`` is ``doc path:line``; ``primary`` the id of the reading the
    oracle's expected values follow (the spec's own formula settings);
    every other reading is accepted too (`families.elementwise.readings`).  ``reviewed``:
    written by hand in the reviewed overlay (`spec.load`), which extract
    never overwrites; False: derived by extract (`spec.ambiguity`)."""

    id: str
    kind: AmbiguityKind
    question: str
    source: str
    readings: tuple[Reading, ...]
    primary: str
    reviewed: bool = False
    #: Where this ambiguity's readings must agree with others' (None: they may differ element by element).
    tie: Tie | None = None

    def reading(self, reading_id: str) -> Reading | None:
        return next((r for r in self.readings if r.id == reading_id), None)

    @property
    def others(self) -> tuple[Reading, ...]:
        """The readings other than the primary one."""
        return tuple(r for r in self.readings if r.id != self.primary)


@dataclass(frozen=True, slots=True)
class Semantics:
    """What every family's reviewed semantics have: ``source``, the ``doc
    path:line`` the reviewer read them from.  A family's record derives
    from this one; its family checks ``isinstance`` to claim a spec."""

    source: str

    def attach(self, spec: Spec) -> Spec:
        """``spec`` with these semantics (`spec.reviewed.with_semantics`).  A
        kind that only completes what the spec already models (a formula,
        `families.elementwise.semantics`) overrides this."""
        return replace(spec, semantics=self)


@dataclass(frozen=True, slots=True)
class Spec:
    """Everything the harness knows about one operator."""

    operator: str                 # ACTIVATION_SHRINK
    struct: str                   # DML_ACTIVATION_SHRINK_OPERATOR_DESC
    category: str                 # activation, element_wise, ...
    introduced: FeatureLevel
    fields: tuple[Field, ...]
    formula: Formula
    support: tuple[SupportTable, ...]
    in_place: tuple[InPlace, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    tolerance: tuple[Tolerance, ...] = ()
    sources: tuple[SourcePage, ...] = ()
    disagreements: tuple[Disagreement, ...] = ()
    introduced_also: tuple[FeatureLevel, ...] = ()  # other levels the page also claims
    operator_type: int | None = None  # DML_OPERATOR_TYPE number (header fact, filled by extract)
    ambiguities: tuple[Ambiguity, ...] = ()  # what the doc leaves undecided (docs/ambiguities.md)
    semantics: Semantics | None = None  # from the reviewed overlay (`spec.reviewed`), never from extract

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    def tensor_field(self, name: str) -> Field | None:
        """The tensor field a case's tensor named ``name`` binds: a
        ``tensor`` field by its own name, a ``tensor_array`` field only as
        ``Field[k]`` (`element_name`); None for any other name."""
        head, index = split_element(name)
        found = self.field(head)
        if found is None or not found.is_tensor or (index is None) != (found.kind is FieldKind.TENSOR):
            return None
        return found

    @property
    def tensors(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.is_tensor)

    @property
    def attributes(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if not f.is_tensor)

    def table_at(self, level: FeatureLevel, *, condition: Condition | None = None) -> SupportTable | None:
        """The support table in force at ``level``: the newest table whose level
        is at or below it (DESIGN.md: a table applies "and above")."""
        candidates = [t for t in self.support if t.level <= level and t.condition == condition]
        return max(candidates, key=lambda t: t.level, default=None)

    def table_for(self, level: FeatureLevel, attributes: tuple[tuple[str, object], ...]) -> SupportTable | None:
        """The table in force at ``level`` for a call with ``attributes``: the
        newest conditional one whose condition they meet, else the plain one
        (what the cpu reference accepts and a case folder's
        ``expect_supported`` is held against)."""
        attrs = {k: str(v) for k, v in attributes}
        for t in sorted(self.support, key=lambda t: t.level, reverse=True):
            cond = t.condition
            if cond is not None and t.level <= level and any(attrs.get(cond.field, "").endswith(v) for v in cond.values):
                return t
        return self.table_at(level)
