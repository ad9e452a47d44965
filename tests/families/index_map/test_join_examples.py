"""The JOIN and SPLIT pages' worked examples (issue #34 item 2): an example
holds the tensor array as a list (``inputs``, ``outputs``), the schema and
the checks against the spec locate a malformed one, each runs as a case
the oracle and the CPU reference agree on, and lint (DML131) finds a
changed value at its tensor."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.backends.cpu import CpuBackend
from dmlconform.cli import main
from dmlconform.families.index_map.join_examples import example_problems
from dmlconform.families.index_map.join_moves import join_expected
from dmlconform.families.index_map.joins import JoinCall
from dmlconform.families.index_map.semantics import Example, ExampleTensor, IndexMap
from dmlconform.lint.examples import findings
from dmlconform.results import Outcome
from dmlconform.runner import run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO
from tests.families.index_map.test_index_map import _cases, _spec
from tests.families.index_map.test_joins import JOINS, _calls

#: The examples each page has: JOIN's Example 2 joins the same inputs on three axes.
NAMES = {"JOIN": ["example1", "example2a", "example2b", "example2c"], "SPLIT": ["example1", "example2"]}


def _sem(op: str) -> IndexMap:
    sem = _spec(op).semantics
    assert isinstance(sem, IndexMap)
    return sem


def _with(op: str, *examples: Example) -> m.Spec:
    spec = _spec(op)
    return dataclasses.replace(spec, semantics=dataclasses.replace(_sem(op), examples=examples))  # type: ignore[type-var]


@pytest.mark.parametrize("op", JOINS)
def test_the_pages_examples_are_transcribed_and_lint_passes_them(op: str) -> None:
    sem = _sem(op)
    assert [e.name for e in sem.examples] == NAMES[op]
    assert list(findings(_spec(op))) == []
    first = sem.examples[0]
    assert [t.sizes for t in first.array] == ([(1, 1, 2, 3), (1, 1, 2, 4)] if op == "JOIN" else
                                              [(1, 1, 2, 2), (1, 1, 1, 2), (1, 1, 3, 2)])


@pytest.mark.parametrize("op", JOINS)
@pytest.mark.parametrize("level", [m.FeatureLevel.FL_1_0, m.FeatureLevel.FL_6_4])
def test_each_example_is_a_case_with_its_values_and_the_oracle_prints_the_pages_output(
        op: str, level: m.FeatureLevel) -> None:
    sem = _sem(op)
    cases = {c.id.rsplit("/", 1)[1]: c for c in _cases(op, level) if "/example" in c.id}
    assert sorted(cases) == NAMES[op]
    for e in sem.examples:
        case = cases[e.name]
        given = case.inputs if op == "JOIN" else case.outputs
        assert [t.sizes for t in given] == [t.sizes for t in e.array]
        if op == "JOIN":
            assert [tuple(t.view().reshape(-1).tolist()) for t in case.inputs] == [t.values for t in e.array]
        else:
            assert tuple(case.inputs[0].view().reshape(-1).tolist()) == e.input_values
        expected = [v.reshape(-1).tolist() for v in join_expected(sem, case).values()]
        printed = [list(e.output_values)] if op == "JOIN" else [list(t.values) for t in e.array]
        assert expected == printed, e.name
    results = run_cases([(_spec(op), c) for c in cases.values()], CpuBackend(feature_level=level.short))
    assert [r.outcome for r in results] == [Outcome.PASS] * len(cases), [r.message for r in results]


def test_a_changed_value_is_a_finding_at_its_tensor() -> None:
    e = _sem("SPLIT").examples[1]
    bad = dataclasses.replace(e, array=(e.array[0], dataclasses.replace(e.array[1], values=(2, 4, 6, 8, 10, 13))))
    ((at, message),) = findings(_with("SPLIT", bad))
    assert at == ("semantics", "examples", 1, "outputs", 1)
    assert message.endswith("prints output tensor 1 as {2, 4, 6, 8, 10, 13}, but the split of its input along Axis "
                            "3 gives {2, 4, 6, 8, 10, 12}: the doc's output is wrong")
    e = _sem("JOIN").examples[3]
    bad = dataclasses.replace(e, array=(e.array[0], dataclasses.replace(e.array[1], values=(5, 6, 7, 9)), e.array[2]))
    ((at, message),) = findings(_with("JOIN", bad))
    assert at == ("semantics", "examples", 3, "output") and "gives {1, 2, 5, 6, 9, 10, 3, 4, 7, 9, 11, 12}" in message


def test_sizes_that_do_not_join_and_another_type_are_findings() -> None:
    e = _sem("JOIN").examples[0]
    wrong_axis = dataclasses.replace(e, attributes=(("Axis", 2),))
    ((at, message),) = findings(_with("JOIN", wrong_axis))
    assert at[-1] == "attributes" and "tensor 0 of the array has sizes [1, 1, 2, 3]" in message
    other_type = dataclasses.replace(e, array=(dataclasses.replace(e.array[0], type=m.DataType.FLOAT16), e.array[1]))
    ((at, message),) = findings(_with("JOIN", other_type))
    assert at == ("semantics", "examples", 0, "inputs", 0) and "DataType FLOAT16, but it must be the output's" in message
    assert not [c for c in _cases("JOIN") if c.id.endswith("/example1") and c.attribute_map()["Axis"] == 2]


@settings(max_examples=100, deadline=None)
@given(_calls(), st.data())
def test_an_example_is_right_exactly_when_its_output_is_numpys(call: JoinCall, data: st.DataObject) -> None:
    """An example printing numpy's concatenate (split) has no problem; one value changed, one finding."""
    sizes = call.parts if call.join else (call.whole,)
    given_ = [np.arange(int(np.prod(s)), dtype=np.float64).reshape(s) + 100 * k for k, s in enumerate(sizes)]
    cuts = np.cumsum([p[call.axis] for p in call.parts])[:-1]
    shown = [np.concatenate(given_, axis=call.axis)] if call.join else np.split(given_[0], cuts, axis=call.axis)
    k = data.draw(st.integers(0, len(shown) - 1), label="changed tensor")
    changed = [s.copy() for s in shown]
    changed[k].reshape(-1)[data.draw(st.integers(0, changed[k].size - 1), label="element")] += 0.5
    op = "JOIN" if call.join else "SPLIT"

    def example(printed: list[np.ndarray]) -> Example:
        array = given_ if call.join else printed
        single_in, single_out = (None, printed[0]) if call.join else (given_[0], None)
        tensors = tuple(ExampleTensor(m.DataType.FLOAT32, a.shape, tuple(a.reshape(-1).tolist())) for a in array)
        return Example("example1", "x.md:1", 0, m.DataType.FLOAT32, () if single_in is None else single_in.shape,
                       () if single_in is None else tuple(single_in.reshape(-1).tolist()), (), (), None,
                       (("Axis", call.axis),), m.DataType.FLOAT32, () if single_out is None else single_out.shape,
                       () if single_out is None else tuple(single_out.reshape(-1).tolist()), array=tensors)

    assert example_problems(_sem(op), example(shown)) == []
    ((at, _),) = example_problems(_sem(op), example(changed))
    assert at == (("output",) if call.join else ("outputs", k))


def _folder(tmp_path: Path, op: str, old: str, new: str) -> Path:
    """specs/<op>.yaml and its overlay with ``old`` replaced by ``new``."""
    specs = tmp_path / "specs"
    (specs / "reviewed").mkdir(parents=True)
    shutil.copy(REPO / "specs" / f"{op}.yaml", specs / f"{op}.yaml")
    text = (REPO / "specs" / "reviewed" / f"{op}.yaml").read_text()
    assert text.count(old) == 1
    (specs / "reviewed" / f"{op}.yaml").write_text(text.replace(old, new))
    return specs


@pytest.mark.parametrize(("op", "old", "new", "expected"), [
    ("SPLIT", "values: [5, 6]}", "values: [5, 7]}",
     ":27:7: DML131 example1 (operators/sdk-api/ns-directml-dml_split_operator_desc.md:111) prints output tensor 1 "
     "as {5, 7}, but the split of its input along Axis 2 gives {5, 6}: the doc's output is wrong"),
    ("SPLIT", "values: [2, 4, 6, 8, 10, 12]}", "values: [2, 4, 6, 8, 10]}",
     ":35:52: DML002 5 values for sizes [1, 1, 6, 1] (6 elements); transcribe every value"),
    ("JOIN", "    inputs:\n    - {type: FLOAT32, sizes: [1, 1, 2, 3], values: [1, 2, 3, 4, 5, 6]}\n"
             "    - {type: FLOAT32, sizes: [1, 1, 2, 4], values: [7, 8, 9, 10, 11, 12, 13, 14]}\n", "",
     ":24:5: DML002 an example of a join gives its tensor array as inputs: a list of {type, sizes, values} in the "
     "array's order; add it"),
    ("SPLIT", "    attributes: {Axis: 3}\n", "    attributes: {Axis: 3}\n    output: {type: FLOAT32, sizes: [1], "
              "values: [1]}\n",
     ":33:13: DML002 an example of a split has no output: its tensor array is outputs; drop output"),
    ("GATHER", "values: [14, 12, 14, 11, 13]}\n", "values: [14, 12, 14, 11, 13]}\n    inputs:\n"
               "    - {type: FLOAT32, sizes: [1], values: [1]}\n",
     ":33:5: DML002 an example of a gather has no inputs; drop inputs"),
])
def test_lint_locates_each_problem_of_an_example(tmp_path: Path, op: str, old: str, new: str, expected: str) -> None:
    specs = _folder(tmp_path, op, old, new)
    result = CliRunner().invoke(main, ["lint", "--strict", str(specs)])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if "reviewed" in line]
    assert len(lines) == 1 and lines[0].startswith(f"{specs / 'reviewed' / f'{op}.yaml'}{expected}"), result.output
