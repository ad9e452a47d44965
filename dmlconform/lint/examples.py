"""Lint rule DML131 (``doc-example``): the doc's worked examples, as the
reviewer transcribed them into the reviewed overlay, evaluated.

Issue #24 item 1: "the doc's worked examples become cases (and lint
evaluates them)".  An example can be wrong in two ways, each a finding at
its place in the overlay: the output it prints is not the function of its
input (over its axes), or the terms its comment lists for an output
element are not the input's terms there (the REDUCE page's Example 3 lists
a 5 where its input has a 4).  A warning: the doc is wrong, the spec and
the cases (which compute from the input) are not.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from dmlconform.families.index_map.join_examples import example_problems as join_example_problems
from dmlconform.families.index_map.joins import is_join
from dmlconform.families.index_map.oracle import example_problems
from dmlconform.families.index_map.semantics import IndexMap
from dmlconform.families.reduction.oracle import exact_values, groups
from dmlconform.families.reduction.semantics import DECREASING, Example, Reduction
from dmlconform.families.window.fold_oracle import example_problems as fold_example_problems
from dmlconform.families.window.semantics import Window
from dmlconform.spec import model as m
from dmlconform.spec.reviewed_checks import Located


def findings(spec: m.Spec) -> Iterator[Located]:
    """Every disagreement of the examples of ``spec``'s reviewed semantics
    with their own input, at paths from the overlay's top."""
    if isinstance(spec.semantics, Reduction):
        for example in spec.semantics.examples:
            yield from _example(example)
    if isinstance(spec.semantics, IndexMap):  # the gathers' examples (issue #34): sizes, values, types
        for e in spec.semantics.examples:
            problems = join_example_problems(spec.semantics, e) if is_join(spec.semantics) else \
                [((key,), message) for key, message in example_problems(spec.semantics, e)]
            for at, message in problems:  # JOIN's and SPLIT's: at a tensor of the array
                yield ("semantics", "examples", e.index, *at), message
    if isinstance(spec.semantics, Window):  # FOLD's and UNFOLD's examples (issue #35)
        for w in spec.semantics.examples:
            for key, message in fold_example_problems(spec, spec.semantics, w):
                yield ("semantics", "examples", w.index, key), message


def _show(values: np.ndarray | tuple[float, ...]) -> str:
    return "{" + ", ".join(f"{float(v):g}" for v in values) + "}"


def _example(e: Example) -> Iterator[Located]:
    where = ("semantics", "examples", e.index)
    x = np.array(e.values, dtype=np.float64).reshape(e.sizes)
    last = e.direction == DECREASING
    got = exact_values(x, e.axes, e.function, last=last)
    printed = np.array(e.output)
    if not np.array_equal(got, printed):
        yield where + ("output",), (
            f"{e.name} ({e.source}) prints {_show(printed)}, but {e.function} over axes {list(e.axes)} of its input "
            f"gives {_show(got)}; the doc's output is wrong: report it, and keep the overlay as the doc has it")
    rows = groups(x, sorted(e.axes))
    for k, listed in enumerate(e.terms):
        if tuple(rows[k].tolist()) != listed:
            yield where + ("terms", k), _terms_message(e, k, rows[k], listed)


def _terms_message(e: Example, k: int, row: np.ndarray, listed: tuple[float, ...]) -> str:
    """Which listed term differs from the input's, and what the listed terms would give."""
    differ = [i for i, (a, b) in enumerate(zip(row.tolist(), listed)) if a != b]
    first = (f" (term {differ[0]}: {listed[differ[0]]:g} where the input has {row[differ[0]]:g})" if differ else
             f" ({len(listed)} terms where the input has {row.size})")
    gives = exact_values(np.array(listed), [0], e.function)[0] if listed else float("nan")
    return (f"{e.name} ({e.source}): the comment of output element {k} lists {e.function.lower()}{_show(listed)}, "
            f"but the input's terms there are {_show(row)}{first}; the listed terms give {gives:g}, the output "
            f"{e.output[k]:g}: the doc's comment is wrong")
