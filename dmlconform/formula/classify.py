"""Formula block in, `Parsed` or `NotParsed(reason)` out.

DESIGN.md, "The spec" and "The oracle": the extractor calls `classify` for each
formula block; a formula that parses, is element-wise and binds to the
operator's fields is *evaluable* by the oracle.  Everything else gets a reason a
person can act on, never a silent drop (STYLE.md, array-api-tests).  Cheap to
import: no numpy.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from dmlconform.errors import FormulaError
from dmlconform.formula.expand import expand
from dmlconform.formula.functions import CONSTANTS, LIBRARY, REDUCTIONS, is_enum_constant, primitive
from dmlconform.formula.lexer import TYPOGRAPHY
from dmlconform.formula.parser import parse
from dmlconform.formula.tree import Assign, Call, FormulaTree, Integral, names, notes, walk


class Category(enum.Enum):
    """Why a block is not an element-wise formula."""

    PSEUDOCODE = "pseudocode"          # loops over coordinates or regions
    EXAMPLE = "example"                # worked tensors, input --> output
    REDUCTION = "reduction"            # sum over an axis, softmax, Max(tensor)
    INDEXING = "indexing"              # gather/scatter/slice subscripts, coordinates
    DIAGRAM = "diagram"                # A -> B -> C data flow
    SYNTAX = "syntax"                  # none of the above; the parser's error


@dataclass(frozen=True, slots=True)
class NotParsed:
    """The block is not an element-wise formula; ``line``/``column`` of the
    parse error where there is one (0 = none)."""

    reason: str
    category: Category
    line: int = 0
    column: int = 0


@dataclass(frozen=True, slots=True)
class Parsed:
    """The block parsed.  ``inputs`` pairs each name the formula reads with the
    input tensor it stands for, ``outputs`` each assigned name with its output
    tensor (both empty when no fields were given); ``attributes`` lists the
    attribute fields it uses.  ``reason`` says why it is not evaluable;
    ``notes`` what classification had to assume."""

    tree: FormulaTree
    inputs: tuple[tuple[str, str], ...] = ()
    outputs: tuple[tuple[str, str], ...] = ()
    attributes: tuple[str, ...] = ()
    evaluable: bool = True
    reason: str | None = None
    notes: tuple[str, ...] = ()


#: Text patterns that explain a block the parser refuses, checked in order.
_HINTS: tuple[tuple[re.Pattern[str], Category, str], ...] = (
    (re.compile(r"^\s*for\b|\bendfor\b|\bfor\s*\(|\bfor (?:each|every)\b", re.M), Category.PSEUDOCODE,
     "loop pseudocode over coordinates or regions: not element-wise"),
    (re.compile(r"-->"), Category.EXAMPLE, "worked example of tensors (input --> output), not a formula"),
    (re.compile(r"\bsum\s*\("), Category.REDUCTION, "reduction (sum over an axis or region): not element-wise"),
    (re.compile(r"->"), Category.DIAGRAM, "data-flow diagram of composed operators: not element-wise"),
    (re.compile(r"\w\s*\[|\]\s*\["), Category.INDEXING, "tensor indexing (gather/scatter/slice): not element-wise"),
    (re.compile(r"[A-Za-z_]\w*\.[A-Za-z_]"), Category.INDEXING,
     "coordinate arithmetic on output indices: not element-wise"),
    (re.compile(r"\bassert\b"), Category.PSEUDOCODE, "shape-check pseudocode: not element-wise"),
)
_EXAMPLE_LINE = re.compile(r"^[ \t]*Examples?:?[ \t]*$", re.M)


def classify(
    text: str,
    fields: Sequence[str] = (),
    *,
    inputs: Sequence[str] | None = None,
    outputs: Sequence[str] | None = None,
    origin: str = "<formula>",
    first_line: int = 1,
) -> Parsed | NotParsed:
    """Classify one formula block.

    ``fields`` are the operator's struct members in order; ``inputs`` and
    ``outputs`` its tensor fields by role, in struct order (default: fields
    ending in ``Tensor``/``Tensors``, outputs being those named ``Output...``).
    Without fields the tree is checked for element-wise-ness only.

    A typographic character the lexer refuses (an en dash for a minus) is read
    as the operator it stands for, so the block is still classified; the
    result's ``notes`` (or its reason) say so."""
    body, stripped = _strip_example(text)
    try:
        tree = parse(body, origin=origin, first_line=first_line)
    except FormulaError as err:
        fixed = _typography(body)
        if fixed is None:
            return _explain(body, err)
        result = classify(fixed[0], fields, inputs=inputs, outputs=outputs, origin=origin, first_line=first_line)
        if isinstance(result, NotParsed):
            return replace(result, reason=f"{result.reason}; {fixed[1]}")
        return replace(result, notes=result.notes + stripped + (fixed[1],))
    reduction = _reduction(tree)
    if reduction:
        return NotParsed(reduction, Category.REDUCTION)
    if not fields:
        problem = _unsupported(expand(tree))
        return Parsed(tree, evaluable=problem is None, reason=problem, notes=stripped)
    ins, outs = _roles(tuple(fields), inputs, outputs)
    return _bind(tree, tuple(fields), ins, outs, stripped)


def _strip_example(text: str) -> tuple[str, tuple[str, ...]]:
    m = _EXAMPLE_LINE.search(text)
    if not m:
        return text, ()
    line = text[: m.start()].count("\n") + 1
    return text[: m.start()], (f"worked example from block line {line} on ignored",)


def _typography(text: str) -> tuple[str, str] | None:
    found = [c for c in TYPOGRAPHY if c in text]
    if not found:
        return None
    for c in found:
        text = text.replace(c, TYPOGRAPHY[c])
    return text, "; ".join(f"U+{ord(c):04X} read as {TYPOGRAPHY[c]!r}" for c in found)


def _explain(text: str, err: FormulaError) -> NotParsed:
    for pattern, category, reason in _HINTS:
        if pattern.search(text):
            return NotParsed(reason, category, err.line, err.column)
    return NotParsed(f"does not parse: {err.message}", Category.SYNTAX, err.line, err.column)


def _reduction(tree: FormulaTree) -> str | None:
    for s in tree.assignments:
        for node in walk(s.value):
            if not isinstance(node, Call):
                continue
            low = node.func.lower()
            if low in REDUCTIONS or (low in ("max", "min") and len(node.args) == 1):
                return f"reduction {node.func}(...) combines many elements: not element-wise"
    return None


def _roles(
    fields: tuple[str, ...], inputs: Sequence[str] | None, outputs: Sequence[str] | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    tensors = tuple(f for f in fields if f.endswith(("Tensor", "Tensors")))
    outs = tuple(outputs) if outputs is not None else tuple(t for t in tensors if t.startswith("Output"))
    ins = tuple(inputs) if inputs is not None else tuple(t for t in tensors if t not in outs)
    return ins, outs


def _bind(
    tree: FormulaTree, fields: tuple[str, ...], ins: tuple[str, ...], outs: tuple[str, ...], extra: tuple[str, ...]
) -> Parsed:
    main = tree.main
    if main.params is not None:
        inputs, problem = _bind_params(main, ins)
        outputs: tuple[tuple[str, str], ...] = ((main.target, outs[0]),) if len(outs) == 1 else ()
        notes_: tuple[str, ...] = ()
    else:
        inputs, outputs, problem, notes_ = _bind_program(tree, ins, outs)
    expanded = expand(tree)
    bound = {name for name, _ in inputs} | {s.target for s in tree.assignments if s.params is None}
    free = sorted(set().union(*(names(s.value) for s in expanded.assignments)) - bound)
    attrs_f = [f for f in fields if f not in ins and f not in outs]
    attributes = tuple(a for a in attrs_f if a in free)
    unbound = [n for n in free if n not in attrs_f and n not in CONSTANTS and not is_enum_constant(n)]
    reason = _unsupported(expanded) or problem or _unbound_reason(tree, unbound)
    return Parsed(tree, inputs, outputs, attributes, reason is None, reason, extra + notes_)


def _unbound_reason(tree: FormulaTree, unbound: list[str]) -> str | None:
    if not unbound:
        return None
    comments = " ".join(notes(tree))
    in_comment = [n for n in unbound if re.search(rf"\b{re.escape(n)}\s*=", comments)]
    where = f" ({', '.join(in_comment)} given only in a comment)" if in_comment else ""
    return f"names {', '.join(unbound)} are neither inputs nor attributes of the operator{where}"


def _bind_params(main: Assign, ins: tuple[str, ...]) -> tuple[tuple[tuple[str, str], ...], str | None]:
    params = main.params or ()
    pairs = tuple(zip(params, ins, strict=False))
    if len(params) > len(ins):
        return pairs, f"formula takes {len(params)} inputs but the operator has {len(ins)} input tensors"
    if len(params) < len(ins):
        unused = ", ".join(ins[len(params):])
        count = f"{len(params)} of {len(ins)} input tensors"
        return pairs, f"formula covers {count} ({unused} unused): a step of the operator"
    return pairs, None


def _bind_program(
    tree: FormulaTree, ins: tuple[str, ...], outs: tuple[str, ...]
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...], str | None, tuple[str, ...]]:
    used = set().union(*(names(s.value) for s in tree.assignments))
    bound = ((n, _tensor_for(n, ins)) for n in used if _tensor_for(n, ins))
    inputs = tuple(sorted(bound, key=lambda p: ins.index(p[1])))
    targets = tuple(dict.fromkeys(s.target for s in tree.assignments))
    outputs = tuple((t, _tensor_for(t, outs)) for t in targets if _tensor_for(t, outs))
    if outputs:
        return inputs, outputs, None, ()
    last = tree.assignments[-1].target
    if len(outs) == 1 and last not in ins:
        note = f"formula assigns {last}; the operator's only output tensor is {outs[0]}"
        return inputs, ((last, outs[0]),), None, (note,)
    return inputs, (), "no statement assigns an output tensor", ()


def _tensor_for(name: str, tensors: tuple[str, ...]) -> str:
    for t in (name, name + "Tensor"):
        if t in tensors:
            return t
    return ""


def _unsupported(tree: FormulaTree) -> str | None:
    """Why the oracle cannot evaluate ``tree`` (after expansion), or None."""
    for s in tree.assignments:
        for node in walk(s.value):
            if isinstance(node, Integral):
                return "integral without a closed form"
            if isinstance(node, Call):
                p = primitive(node.func)
                if p is None:
                    return f"unknown function {node.func}" + (" (library)" if node.func in LIBRARY else "")
                lo, hi = p.arity
                if len(node.args) < lo or (hi >= 0 and len(node.args) > hi):
                    count = str(lo) if lo == hi else f"at least {lo}"
                    return f"{node.func} takes {count} arguments, got {len(node.args)}"
    return None


@functools.lru_cache(maxsize=256)
def classified(formula: str, fields: tuple[str, ...], inputs: tuple[str, ...],
               outputs: tuple[str, ...]) -> Parsed | NotParsed:
    """`classify` of a formula text with a spec's fields and tensors (a frozen
    `Parsed` or `NotParsed`), once per process for the same arguments: the
    generator and the runner's oracles both bind every spec of a run."""
    return classify(formula, list(fields), inputs=inputs, outputs=outputs)
