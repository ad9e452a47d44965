"""Case folders checked whole before anything runs (dmlconform/case_folders.py,
issue #20 item 5): what `gen` and `import onnx` write validates clean; every
folder under tests/hostile/cases/ (made by tests/hostile/make_cases.py) is an
input error, exit 2, one line per problem at its manifest line, before the
backend is built."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.case_folders import case_problems, folder_error, folder_problems
from dmlconform.cases.model import Case
from dmlconform.cases.store import MANIFEST, case_lines, manifest_case_lines, read_cases, write_cases
from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.errors import ExitCode
from dmlconform.families import cases_of
from dmlconform.families.elementwise.binding import is_runnable
from dmlconform.families.elementwise.cases import generate
from dmlconform.spec.files import spec_files
from dmlconform.spec.model import DataType, FeatureLevel, Spec
from tests.conftest import REPO
from tests.hostile.make_cases import GOOD, case, tensor

HOSTILE = REPO / "tests" / "hostile" / "cases"
HOSTILE_FOLDERS = sorted(p.name for p in HOSTILE.iterdir() if (p / MANIFEST).is_file() and p.name != "good")


#: The operators of the hostile folders: `run` loads only their specs (all
#: 176 take half a second to load, per run).
OPERATORS = ("ACTIVATION_GELU", "ACTIVATION_SHRINK", "ARGMAX", "ELEMENT_WISE_ADD", "ELEMENT_WISE_IS_INFINITY", "GEMM",
             "TOP_K1")


@functools.cache
def _specs() -> dict[str, Spec]:
    return {s.operator: s for s in (load_spec(p) for p in spec_files([REPO / "specs"]))}


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A spec folder holding the specs of `OPERATORS`."""
    folder = tmp_path_factory.mktemp("specs")
    (folder / "reviewed").mkdir()
    for op in OPERATORS:
        (folder / f"{op}.yaml").write_bytes((REPO / "specs" / f"{op}.yaml").read_bytes())
        overlay = REPO / "specs" / "reviewed" / f"{op}.yaml"
        if overlay.is_file():
            (folder / "reviewed" / f"{op}.yaml").write_bytes(overlay.read_bytes())
    return folder


def _run(specs: Path, *args: str) -> tuple[int, str]:
    """`dmlconform run` on one worker, output with the repository's path cut."""
    result = CliRunner().invoke(main, ["run", "--specs", str(specs), "--no-progress", "-j", "1", *args])
    return result.exit_code, result.output.replace(f"{REPO}/", "")


@functools.cache
def _hostile(specs: Path, name: str) -> tuple[int, str]:
    """`_run` on the hostile folder ``name``, once per module (reports, if
    it wrote any, beside ``specs``: `_reports`)."""
    return _run(specs, "--cases", str(HOSTILE / name), "-o", str(_reports(specs, name)))


def _reports(specs: Path, name: str) -> Path:
    return specs.parent / f"reports-{name}"


def _problems(c: Case) -> list[str]:
    return list(case_problems(_specs()[c.operator], c))


# -- what the writers write ------------------------------------------------------------
@functools.cache
def _suite(level: FeatureLevel, seed: int) -> tuple[Case, ...]:
    """Every case `gen` writes at ``level`` for ``seed`` (in memory)."""
    return tuple(c for s in _specs().values() if is_runnable(s, level)[0] for c in generate(s, level, seed=seed))


@pytest.mark.parametrize(("level", "seed"), [(FeatureLevel.FL_6_4, 0), (FeatureLevel.FL_3_0, 11)])
def test_every_case_of_the_default_suite_validates_clean(level: FeatureLevel, seed: int) -> None:
    """Every operator, negative cases included (their data types and
    dimension counts are outside the table: the backend's to reject); about
    half a second for the 5201 cases at 6_4."""
    cases = _suite(level, seed)
    assert len({c.operator for c in cases}) >= 60 and len(cases) > 3000
    bad = [f"{p.case_id}: {p.text}" for p in folder_problems(cases, _specs())]
    assert not bad, "\n".join(bad[:20])


def test_a_folder_gen_writes_validates_clean_with_each_case_on_its_line(tmp_path: Path) -> None:
    """Every 16th case of the suite (all operators) through the files, as
    `gen` writes them (the whole suite: test_every_case_gen_writes_validates_clean)."""
    cases = _suite(FeatureLevel.FL_6_4, 0)[::16]
    write_cases(cases, tmp_path)
    back = read_cases(tmp_path)
    assert len({c.operator for c in back}) >= 60 and list(folder_problems(back, _specs())) == []
    lines = (tmp_path / MANIFEST).read_text().splitlines()
    assert case_lines(tmp_path) == tuple(range(3, 3 + len(back)))
    assert all(f'"id": {json.dumps(c.id)}' in lines[n - 1] for c, n in zip(back, case_lines(tmp_path)))


def test_the_committed_onnx_folder_validates_clean() -> None:
    folder = REPO / "cases" / "onnx"
    if not (folder / MANIFEST).is_file():
        pytest.skip("no committed cases/onnx")
    cases = read_cases(folder)
    assert len(cases) >= 130 and list(folder_problems(cases, _specs())) == []


@pytest.mark.slow
@pytest.mark.parametrize(("level", "seed"), [("6_4", "0"), ("5_0", "3")])
def test_every_case_gen_writes_validates_clean(tmp_path: Path, level: str, seed: str) -> None:
    """The whole suite through the files (about 15 s a run: 10 to write, 4 to
    read, 0.2 to validate)."""
    result = CliRunner().invoke(main, ["gen", "--feature-level", level, "--seed", seed, "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    cases = read_cases(tmp_path)
    assert len(cases) > 4000 and list(folder_problems(cases, _specs())) == []
    assert case_lines(tmp_path) == tuple(range(3, 3 + len(cases)))


# -- hostile folders -------------------------------------------------------------------
@pytest.mark.parametrize("name", HOSTILE_FOLDERS)
def test_a_hostile_folder_exits_2_with_every_problem_before_anything_runs(
        name: str, golden, specs: Path) -> None:  # type: ignore[no-untyped-def]
    """The exact lines are golden files (tests/golden/hostile-cases/); no
    report is written, no traceback shown."""
    code, output = _hostile(specs, name)
    assert code == ExitCode.USAGE and "Traceback" not in output and not _reports(specs, name).exists()
    golden.check(f"hostile-cases/{name}.txt", output)


@pytest.mark.parametrize(("name", "line"), [
    ("unknown_operator", "tests/hostile/cases/unknown_operator/manifest.json:4:3: error: case 1 "
                         "(ACTIVATION_SHRNK/FLOAT32/1d/typo): operator ACTIVATION_SHRNK has no spec among the 7 "
                         "loaded (did you mean ACTIVATION_SHRINK?): correct the name, point --specs at the folder "
                         "holding its spec, or leave the case out"),
    ("dtype_contradicts", "tests/hostile/cases/dtype_contradicts/manifest.json:3:3: error: case 0 "
                          "(ACTIVATION_SHRINK/FLOAT16/1d/all-float32): dtype FLOAT16 is the data type of none of its "
                          "inputs (InputTensor is FLOAT32): set \"dtype\" to FLOAT32"),
    ("duplicate_ids", "tests/hostile/cases/duplicate_ids/manifest.json:6:3: error: case 3 (x): case 2 has the same id: "
                      "give every case its own id"),
    ("bad_attributes", "tests/hostile/cases/bad_attributes/manifest.json:3:3: error: case 0 (shrink/misspelt): "
                       "attribute Thresh is not a field of ACTIVATION_SHRINK (its attributes: Bias, Threshold): did "
                       "you mean Threshold?"),
    ("bad_attributes", "tests/hostile/cases/bad_attributes/manifest.json:6:3: error: case 3 (shrink/huge-exact-text): "
                       "attribute Threshold=\"1e999999999\" is not a number: give a finite FLOAT32 value as a number "
                       "(0.5) or an exact text (\"1/6\")"),
    ("missing_tensors", "tests/hostile/cases/missing_tensors/manifest.json:3:3: error: case 0 (shrink/no-output): "
                        "output tensor OutputTensor is missing: ACTIVATION_SHRINK needs it; add it to \"outputs\""),
    ("bad_aliases", "tests/hostile/cases/bad_aliases/manifest.json:5:3: error: case 2 (gelu/not-in-place): alias "
                    "[OutputTensor, InputTensor]: ACTIVATION_GELU does not allow it in place (it allows: none): "
                    "remove the alias"),
    ("inconsistent_sizes", "tests/hostile/cases/inconsistent_sizes/manifest.json:3:3: error: case 0 (shrink/4-to-5): "
                           "ACTIVATION_SHRINK needs the same Sizes for InputTensor, OutputTensor (InputTensor=[4], "
                           "OutputTensor=[5]): make them equal"),
])
def test_each_issue_20_problem_is_one_located_line(name: str, line: str, specs: Path) -> None:
    """Before: an unknown operator was dropped (exit 0), a contradicting
    dtype and duplicate ids PASSed, the rest FAILed as the backend's fault
    ("the backend raised ...") or timed out ("1e999999999")."""
    code, output = _hostile(specs, name)
    assert code == ExitCode.USAGE and line in output.splitlines()


M = "tests/hostile/cases/{}/manifest.json:{}:3: error: case {} ({}): "
CLAIMED = '"expect_supported" is true, but the table in force at 6_4 (from {}) does not support {} for {} (it supports {}): '


@pytest.mark.parametrize(("name", "line"), [
    ("index_output_float32", M.format("index_output_float32", 3, 0, "argmax/float32-indices") + CLAIMED.format(
        "4_1", "FLOAT32", "OutputTensor", "INT64, INT32, UINT64, UINT32") + "give OutputTensor one of those, or set "
        '"expect_supported" to false'),
    ("index_output_float32", M.format("index_output_float32", 4, 1, "top_k/float32-indices") + CLAIMED.format(
        "5_0", "FLOAT32", "OutputIndexTensor", "UINT64, UINT32") + "give OutputIndexTensor one of those, or set "
        '"expect_supported" to false'),
    ("flipped_expect_supported", M.format("flipped_expect_supported", 3, 0, "shrink/float64-claimed") + CLAIMED.format(
        "5_1", "FLOAT64", "InputTensor", "FLOAT32, FLOAT16, INT32, INT16, INT8, UINT32, UINT16, UINT8") + "give "
        'InputTensor one of those, or set "expect_supported" to false'),
    ("flipped_expect_supported", M.format("flipped_expect_supported", 4, 1, "shrink/9d-claimed") + (
        '"expect_supported" is true, but the table in force at 6_4 (from 5_1) does not support 9 dimensions for '
        'InputTensor (it supports 1, 2, 3, 4, 5, 6, 7, 8): give InputTensor one of those counts, or set '
        '"expect_supported" to false')),
    ("huge_contraction", M.format("huge_contraction", 3, 0, "gemm/k1e9-by-broadcast") + (
        "OutputTensor's 4 elements x K=1,000,000,000 terms each = 4,000,000,000 products, over the 1,073,741,824 one "
        "case may ask for (limits.MAX_CASE_WORK): give a smaller K or output, or split the case")),
    ("huge_contraction", M.format("huge_contraction", 4, 1, "gemm/k1e8-by-broadcast") + (
        "tensor ATensor has sizes [2, 100000000], 200,000,000 elements (its file holds 1; the rest repeat by its "
        "strides), over the 33,554,432 one case may compute with (limits.MAX_TENSOR_ELEMENTS): give it smaller "
        "sizes, or split the case")),
])
def test_each_issue_33_claim_and_size_is_checked_before_anything_runs(name: str, line: str, specs: Path) -> None:
    """Before: an index output of FLOAT32 claimed supported made a correct
    backend FAIL ("rejected a configuration that the 6_4 table supports:
    ... FLOAT32 is not supported"), as did a negative case flipped to
    ``expect_supported: true``; a GEMM with K = 10^9 or 10^8 by stride-0
    broadcasts ran out of memory and was blamed on the backend."""
    code, output = _hostile(specs, name)
    assert code == ExitCode.USAGE and line in output.splitlines(), output


@pytest.mark.parametrize("large", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_every_family_case_claims_only_what_its_table_supports(large: bool) -> None:
    """The rules of issue #33 (the claim, the work and the tensor limits)
    accept every case every family generates at 6_4, with ``--large`` too
    (slow: making the large cases' values takes most of two minutes on 2
    cores; the largest, GEMM k512, 2^27 products; CELU, 4.2 million
    elements)."""
    cases = [c for s in _specs().values() for c in cases_of(s, FeatureLevel.FL_6_4, seed=0, large=large)]
    assert len({c.operator for c in cases}) >= 100 and any(not c.expect_supported for c in cases)
    bad = [f"{p.case_id}: {p.text}" for p in folder_problems(cases, _specs())]
    assert not bad, "\n".join(bad[:20])


def test_problems_past_twenty_are_counted(specs: Path) -> None:
    code, output = _hostile(specs, "many_problems")
    lines = output.splitlines()
    assert code == ExitCode.USAGE and len(lines) == 21
    assert lines[-1] == ("tests/hostile/cases/many_problems/manifest.json: error: and 5 more problems in this case "
                         "folder (fix these first)")


def test_the_folder_is_checked_before_the_backend_is_built(specs: Path) -> None:
    """A backend that does not exist (exit 3) is not even looked for."""
    code, output = _run(specs, "--cases", str(HOSTILE / "dtype_contradicts"), "--backend", "nosuch")
    assert code == ExitCode.USAGE and "dtype FLOAT16 is the data type of none of its inputs" in output


def test_selecting_cases_does_not_skip_the_check(specs: Path) -> None:
    """The folder is checked whole: -k picks what runs, not what is checked."""
    code, output = _run(specs, "--cases", str(HOSTILE / "duplicate_ids"), "-k", "good")
    assert code == ExitCode.USAGE and "case 2 has the same id" in output


def test_op_leaves_the_cases_of_other_operators_out_unchecked(specs: Path, tmp_path: Path) -> None:
    code, output = _run(specs, "--cases", str(HOSTILE / "unknown_operator"), "--op", "ACTIVATION_SHRINK",
                        "--no-isolate", "-o", str(tmp_path))
    assert code == ExitCode.OK, output
    assert [c["case_id"] for c in json.loads((tmp_path / "report.json").read_text())["cases"]] == [GOOD.id]


def test_an_indented_hand_written_manifest_names_each_case_at_its_first_line(specs: Path, tmp_path: Path) -> None:
    for path in (HOSTILE / "dtype_contradicts").iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    text = json.dumps({"version": 1, "format": manifest["format"], "cases": manifest["cases"] * 2}, indent=2)
    (tmp_path / MANIFEST).write_text(text)
    first, second = (n for n, line in enumerate(text.splitlines(), 1) if line == "    {")
    code, output = _run(specs, "--cases", str(tmp_path))
    assert code == ExitCode.USAGE
    assert [line.split(": error: ")[0] for line in output.splitlines()] == [
        f"{tmp_path / MANIFEST}:{first}:5", f"{tmp_path / MANIFEST}:{second}:5", f"{tmp_path / MANIFEST}:{second}:5"]


# -- the rules, one by one -------------------------------------------------------------
CLIP = dict(operator="ELEMENT_WISE_CLIP1", dtype=DataType.INT8, inputs=(tensor("InputTensor", dtype=DataType.INT8),),
            outputs=(tensor("OutputTensor", dtype=DataType.INT8),))
SCALE_4D = dict(inputs=(tensor("InputTensor", (1, 4, 1, 1)),), outputs=(tensor("OutputTensor", (1, 4, 1, 1)),))
CLIP_ATTRS = (("MinMaxDataType", "DML_TENSOR_DATA_TYPE_INT8"), ("Min", -3), ("Max", 100))


@pytest.mark.parametrize(("made", "problems"), [
    (case("ok/exact-text-and-integer-float", attributes=(("Bias", 1), ("Threshold", "1/6"))), []),
    (case("ok/broadcast", inputs=(tensor("InputTensor", (2, 3), strides=(0, 1), count=3),),
          outputs=(tensor("OutputTensor", (2, 3)),)), []),
    (case("ok/interleaved-output", inputs=(tensor("InputTensor", (3, 2)),),
          outputs=(tensor("OutputTensor", (3, 2), strides=(2, 3)),)), []),
    (case("ok/clip-int8", attributes=CLIP_ATTRS, **CLIP), []),
    (case("clip/out-of-range", attributes=(CLIP_ATTRS[0], ("Min", -300), ("Max", 1.5)), **CLIP),
     ["attribute Min=-300 is outside INT8's range: give an integer from -128 to 127",
      "attribute Max=1.5 is not an integer: give an integer from -128 to 127 (INT8)"]),
    (case("clip/suffix", attributes=(("MinMaxDataType", "INT8"), *CLIP_ATTRS[1:]), **CLIP),
     ["attribute MinMaxDataType=\"INT8\" is a suffix: write the full name DML_TENSOR_DATA_TYPE_INT8"]),
    (case("shrink/pointer", attributes=(*GOOD.attributes, ("ScaleBias.Scale", 2.0))),
     ["attribute ScaleBias.Scale is not a field of ACTIVATION_SHRINK (its attributes: Bias, Threshold): remove it"]),
    (case("identity/pointer", "ELEMENT_WISE_IDENTITY", attributes=(("ScaleBias.Scale", 2.0),)),
     ["attribute ScaleBias.Scale sets the pointer ScaleBias, which cases leave null (the oracle does not model "
      "it): remove it"]),
    (case("shrink/tensor-as-attribute", attributes=(*GOOD.attributes, ("InputTensor", 1.0))),
     ["attribute InputTensor is a tensor of ACTIVATION_SHRINK: give it under \"inputs\" or \"outputs\""]),
    (case("shrink/twice", attributes=(*GOOD.attributes, ("Bias", 1.0))),
     ["attribute Bias is given twice: keep one"]),
    (case("shrink/alias-dtype", outputs=(tensor("OutputTensor", dtype=DataType.FLOAT16),),
          aliases=(("OutputTensor", "InputTensor"),)),
     ["ACTIVATION_SHRINK needs the same DataType for InputTensor, OutputTensor (InputTensor=FLOAT32, "
      "OutputTensor=FLOAT16): make them equal",
      "alias [OutputTensor, InputTensor]: OutputTensor has data type FLOAT16 but InputTensor FLOAT32: give "
      "OutputTensor the data type of InputTensor (in place, they are one buffer)"]),
    (case("scale/array", "VALUE_SCALE_2D", attributes=(("Scale", 2.0), ("ChannelCount", 4)), **SCALE_4D),
     ["attribute Bias is missing: give one value per channel as text, e.g. [\"Bias\", \"0.5,-1,2\"]"]),
    (case("scale/array-given", "VALUE_SCALE_2D", attributes=(("Scale", 2.0), ("ChannelCount", -1), ("Bias", 1.0)),
          **SCALE_4D),
     ["attribute ChannelCount=-1 is outside UINT32's range: give an integer from 0 to 4294967295"]),
    (case("shrink/alias-twice", aliases=(("OutputTensor", "InputTensor"),) * 2),
     ["alias [OutputTensor, InputTensor]: OutputTensor is aliased twice: keep one alias"]),
], ids=lambda v: v.id if isinstance(v, Case) else "")
def test_case_problems(made: Case, problems: list[str]) -> None:
    assert _problems(made) == problems


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_an_output_is_refused_exactly_when_two_elements_share_memory(data: st.DataObject) -> None:
    dims = data.draw(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 6)), min_size=1, max_size=3),
                     label="(size, stride) per dimension")
    sizes, strides = tuple(s for s, _ in dims), tuple(t for _, t in dims)
    offsets = {sum(i * t for i, t in zip(index, strides)) for index in np.ndindex(*sizes)}
    made = case("shrink/strided", inputs=(tensor("InputTensor", sizes),),
                outputs=(tensor("OutputTensor", sizes, strides=strides),))
    refused = any("one place in memory" in p for p in _problems(made))
    assert refused == (len(offsets) < int(np.prod(sizes)))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_finite_value_of_the_type_is_an_attribute(data: st.DataObject) -> None:
    """FLOAT members hold float32 whatever the case's type; a scalar union
    (CLIP1's Min, Max) holds the case's own type."""
    dtype = data.draw(st.sampled_from([DataType.FLOAT32, DataType.FLOAT16]), label="dtype")
    value = data.draw(st.floats(width=32, allow_nan=False, allow_infinity=False), label="FLOAT value")
    union = data.draw(st.floats(width=16 if dtype is DataType.FLOAT16 else 32, allow_nan=False,
                                allow_infinity=False), label="union value")
    shrink = case("shrink/value", dtype=dtype, inputs=(tensor("InputTensor", dtype=dtype),),
                  outputs=(tensor("OutputTensor", dtype=dtype),), attributes=(("Bias", value), ("Threshold", value)))
    clip = case("clip/value", "ELEMENT_WISE_CLIP1", dtype=dtype, inputs=shrink.inputs, outputs=shrink.outputs,
                attributes=(("MinMaxDataType", f"DML_TENSOR_DATA_TYPE_{dtype.name}"), ("Min", union),
                            ("Max", union)))
    assert _problems(shrink) == [] and _problems(clip) == []


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_manifest_case_lines_finds_each_case_in_any_layout(data: st.DataObject) -> None:
    """Whatever the whitespace and indentation around and inside the cases,
    and whatever comes before the "cases" key (an inner "cases" key too)."""
    cases = data.draw(st.lists(st.dictionaries(st.sampled_from("abc"), st.integers() | st.text(max_size=3)),
                               max_size=5), label="cases")
    spaces = iter(data.draw(st.lists(st.sampled_from([" ", "\n", "\t", "\r\n", ""]), min_size=1), label="spaces") * 50)
    cases_first = data.draw(st.booleans(), label="cases first")
    head = '{"cases": [' if cases_first else '{"version": [1, {"cases": [0]}],\n"cases": ['
    parts, expected = [head], []
    for k, entry in enumerate(cases):
        parts.append(next(spaces))
        expected.append(1 + "".join(parts).count("\n"))
        parts.append(json.dumps(entry, indent=1 if k % 2 else None) + next(spaces) + ",")
    text = "".join(parts).removesuffix(",") + next(spaces) + "]" + next(spaces) + ', "format": "x"}'
    assert json.loads(text)["cases"] == cases
    assert manifest_case_lines(text) == tuple(expected)


def test_an_id_with_a_newline_is_shown_quoted_on_one_line() -> None:
    """Any id is an id (repro lines quote it); a message shows it as JSON."""
    made = case("shrink/'\n touch x", dtype=DataType.INT8)
    error = folder_error(list(folder_problems([made], _specs())), manifest="m.json", lines=(3,))
    assert error.render() == ("m.json:3: error: case 0 (\"shrink/'\\n touch x\"): dtype INT8 is the data type of none "
                              "of its inputs (InputTensor is FLOAT32): set \"dtype\" to FLOAT32")


def test_folder_error_without_lines_names_the_file_only() -> None:
    problems = list(folder_problems([GOOD, GOOD], _specs()))
    error = folder_error(problems, manifest="x/manifest.json", lines=())
    assert error.render() == ("x/manifest.json: error: case 1 (ACTIVATION_SHRINK/FLOAT32/1d/good): case 0 has the "
                              "same id: give every case its own id")
    assert error.exit_code == ExitCode.USAGE


def test_make_cases_writes_what_is_committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The committed folders are what tests/hostile/make_cases.py makes."""
    import tests.hostile.make_cases as make

    monkeypatch.setattr(make, "ROOT", tmp_path)
    make.main()
    for folder in HOSTILE.iterdir():
        for path in folder.iterdir():
            assert (tmp_path / folder.name / path.name).read_bytes() == path.read_bytes(), path


def test_a_case_no_family_checks_is_refused_first() -> None:
    """An operator no family tests yet (CAST was one until the index-map
    family took it): its case is refused before anything else is said."""
    made = case("grad/no-formula", "AVERAGE_POOLING_GRAD", attributes=())
    assert _problems(made)[0] == ("AVERAGE_POOLING_GRAD's formula cannot be evaluated (no parsed formula), so "
                                  "nothing can check this case: leave it out")
