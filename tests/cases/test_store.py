"""The case store: round trip, byte-identical rewrites, refusal of pickled
arrays, located errors for bad files (dmlconform/cases/store.py)."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from click.testing import CliRunner

from dmlconform.cases.model import Case
from dmlconform.cases.store import MANIFEST, read_cases, read_notes, write_cases
from dmlconform.catalog import load_spec
from dmlconform.cli import main
from dmlconform.errors import LocatedError
from dmlconform.families.elementwise.cases import generate
from dmlconform.spec.model import FeatureLevel
from tests.conftest import REPO

SPECS = REPO / "specs"


@functools.lru_cache(maxsize=1)
def _cases() -> tuple[Case, ...]:
    out: list[Case] = []
    for op in ("ACTIVATION_SHRINK", "ELEMENT_WISE_LOGICAL_GREATER_THAN", "ACTIVATION_HARD_SWISH"):
        out += list(generate(load_spec(SPECS / f"{op}.yaml"), FeatureLevel.FL_6_4, seed=3))[::25]
    return tuple(out)


def some_cases() -> list[Case]:
    return list(_cases())


def same(a: Case, b: Case) -> bool:
    plain = ("id", "operator", "level", "dtype", "attributes", "layout", "aliases", "expect_supported", "edges", "seed",
             "out_of_domain")
    if any(getattr(a, k) != getattr(b, k) for k in plain):
        return False
    pairs = list(zip(a.inputs + a.outputs, b.inputs + b.outputs, strict=True))
    return all((s.name, s.dtype, s.sizes, s.strides) == (t.name, t.dtype, t.sizes, t.strides)
               and s.buffer.dtype == t.buffer.dtype and s.buffer.tobytes() == t.buffer.tobytes() for s, t in pairs)


def test_round_trip(tmp_path):
    cases = some_cases()
    assert write_cases(cases, tmp_path, spec_paths={"ACTIVATION_SHRINK": "specs/ACTIVATION_SHRINK.yaml"}) == len(cases)
    back = read_cases(tmp_path)
    assert len(back) == len(cases) and all(same(a, b) for a, b in zip(cases, back, strict=True))
    assert all(not t.buffer.flags.writeable for c in back for t in c.inputs)
    assert isinstance(dict(back[0].attributes)["Bias"], float)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert manifest["version"] == 1 and manifest["specs"] == {"ACTIVATION_SHRINK": "specs/ACTIVATION_SHRINK.yaml"}
    assert set(manifest["cases"][0]) == {"id", "operator", "level", "dtype", "layout", "attributes", "aliases",
                                         "expect_supported", "edges", "seed", "inputs", "outputs"}


def test_rewrite_is_byte_identical_and_drops_stale_files(tmp_path):
    cases = some_cases()
    write_cases(cases, tmp_path / "a")
    write_cases(cases, tmp_path / "b")
    (tmp_path / "b" / "99999.InputTensor.npy").write_bytes(b"stale")
    write_cases(cases, tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_object_array_is_refused(tmp_path):
    write_cases(some_cases()[:1], tmp_path)
    target = tmp_path / "00000.InputTensor.npy"
    np.save(target, np.array([1, "x", None], dtype=object), allow_pickle=True)
    with pytest.raises(LocatedError) as info:
        read_cases(tmp_path)
    assert info.value.path == str(target) and "object arrays are refused" in info.value.message


def test_corrupt_manifest_names_the_place(tmp_path):
    write_cases(some_cases()[:1], tmp_path)
    (tmp_path / MANIFEST).write_text('{\n "cases": [\n  {"id": 1,}\n ]\n}\n')
    with pytest.raises(LocatedError) as info:
        read_cases(tmp_path)
    assert info.value.render().startswith(f"{tmp_path / MANIFEST}:3:")


def test_inconsistent_entries_are_errors(tmp_path):
    write_cases(some_cases()[:1], tmp_path)
    path = tmp_path / MANIFEST
    original = path.read_text()
    data = json.loads(original)
    data["cases"][0]["inputs"][0]["sizes"] = [1000]
    path.write_text(json.dumps(data))
    with pytest.raises(LocatedError, match="address 1000"):
        read_cases(tmp_path)
    data = json.loads(original)
    data["cases"][0]["inputs"][0]["file"] = "../evil.npy"
    path.write_text(json.dumps(data))
    with pytest.raises(LocatedError, match="plain"):
        read_cases(tmp_path)
    data = json.loads(original)
    del data["cases"][0]["seed"]
    path.write_text(json.dumps(data))
    with pytest.raises(LocatedError, match="missing key 'seed'"):
        read_cases(tmp_path)
    with pytest.raises(LocatedError, match="gen"):
        read_cases(tmp_path / "nowhere")


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_gen_command(tmp_path):
    out = tmp_path / "cases"
    result = run("gen", "--specs", str(SPECS / "ACTIVATION_SHRINK.yaml"), "--op", "ACTIVATION_SHRINK", "--dtype", "FLOAT16",
                 "--feature-level", "3_0", "--seed", "5", "-o", str(out))
    assert result.exit_code == 0, result.output
    cases = read_cases(out)
    assert result.output == f"wrote {len(cases)} cases of 1 operator at 3_0 (seed 5) to {out}\n"
    assert {c.dtype.name for c in cases} == {"FLOAT16"} and {c.level.short for c in cases} == {"3_0"}
    assert all(c.seed == 5 for c in cases)


def test_gen_command_errors(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    for op in ("ACTIVATION_SHRINK", "VALUE_SCALE_2D"):
        (specs / f"{op}.yaml").write_bytes((SPECS / f"{op}.yaml").read_bytes())
    result = CliRunner().invoke(main, ["gen", "--specs", str(specs), "--op", "NOPE", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "error: --op NOPE: no such operator" in result.output
    result = CliRunner().invoke(main, ["gen", "--specs", str(specs), "--dtype", "FLOAT17", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "unknown data type 'FLOAT17'" in result.output
    result = CliRunner().invoke(main, ["gen", "--specs", str(specs), "--op", "VALUE_SCALE_2D", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "skipped: integer attribute ChannelCount has no default" in result.output
    out = tmp_path / "none"
    result = CliRunner().invoke(main, ["gen", "--specs", str(specs), "--dtype", "INT64", "-o", str(out)])
    assert result.exit_code == 2 and "error: --dtype INT64: no case of these data types at 6_4" in result.output
    assert not out.exists()


# --- issue #20: hostile case folders -------------------------------------------------------

HOSTILE = REPO / "tests" / "hostile" / "run"


def _located(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(LocatedError) as info:
        call()
    return info.value.render()


def test_a_manifest_nested_too_deep_is_located():
    folder = HOSTILE / "deep-manifest"
    line = (f"{folder / MANIFEST}:1:118: error: JSON nesting deeper than 64 levels; this is not a file dmlconform "
            "wrote")
    assert _located(lambda: read_cases(folder)) == line
    assert _located(lambda: read_notes(folder)) == line


def test_an_npy_header_claiming_more_than_the_file_holds_is_refused_before_allocating():
    folder = HOSTILE / "npy-header-claims-10e12-elements"
    assert _located(lambda: read_cases(folder)) == (
        f"{folder / '00001.InputTensor.npy'}: error: the header claims 1000000000000 elements of float16 but the "
        "file holds 32: it is truncated or not what it says")


def test_npy_files_are_checked_header_first(tmp_path):
    write_cases(some_cases()[:1], tmp_path)
    target = tmp_path / "00000.InputTensor.npy"
    good = target.read_bytes()
    target.write_bytes(good[:-8])  # truncated data
    assert "but the file holds" in _located(lambda: read_cases(tmp_path))
    target.write_bytes(b"\x93NUMPY\x09\x00" + good[8:])  # a version numpy never wrote
    assert _located(lambda: read_cases(tmp_path)) == (
        f"{target}: error: not a plain .npy array (format version 9.0 (this dmlconform reads 1.0 and 2.0)); "
        "write it with numpy.save")
    target.write_bytes(b"not an npy file at all")
    assert _located(lambda: read_cases(tmp_path)).startswith(f"{target}: error: not a plain .npy array (")


def test_case_files_must_be_regular_files_inside_the_folder(tmp_path):
    write_cases(some_cases()[:1], tmp_path / "cases")
    target = tmp_path / "cases" / "00000.InputTensor.npy"
    (tmp_path / "elsewhere.npy").write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(tmp_path / "elsewhere.npy")
    assert _located(lambda: read_cases(tmp_path / "cases")).startswith(
        f"{target}: error: symbolic link to {str(tmp_path / 'elsewhere.npy')!r}, outside")
    target.unlink()
    target.mkdir()
    assert _located(lambda: read_cases(tmp_path / "cases")).startswith(f"{target}: error: a folder, not a regular")
    manifest = tmp_path / "cases" / MANIFEST
    manifest.unlink()
    manifest.symlink_to(tmp_path / "gone.json")
    assert _located(lambda: read_cases(tmp_path / "cases")).startswith(f"{manifest}: error: dangling symbolic link")


def test_a_number_json_cannot_convert_is_located(tmp_path):
    write_cases(some_cases()[:1], tmp_path)
    (tmp_path / MANIFEST).write_text('{"format": "dmlconform-cases", "version": ' + "9" * 5000 + "}")
    assert _located(lambda: read_cases(tmp_path)).startswith(
        f"{tmp_path / MANIFEST}: error: not valid JSON: Exceeds the limit (4300 digits)")


def test_out_of_domain_round_trips_and_old_folders_still_load(tmp_path):
    # issue #22 item 4: an invalid-attribute case keeps the names of its attributes outside the domain;
    # the key is written only for such cases, so a folder written before it reads the same
    spec = load_spec(SPECS / "ACTIVATION_SOFTPLUS.yaml")
    cases = [c for c in generate(spec, FeatureLevel.FL_6_4, seed=3) if c.out_of_domain or c.id.endswith("/padded")]
    write_cases(cases, tmp_path)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert [e.get("out_of_domain") for e in manifest["cases"]] == [None, None, ["Steepness"], ["Steepness"]]
    assert [c.out_of_domain for c in read_cases(tmp_path)] == [(), (), ("Steepness",), ("Steepness",)]
    manifest["cases"][2]["out_of_domain"] = "Steepness"
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(LocatedError, match=r"out_of_domain: expected a list of attribute names, found 'Steepness'"):
        read_cases(tmp_path)
