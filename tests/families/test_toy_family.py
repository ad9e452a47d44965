"""docs/architecture.md "How to add an operator family", followed to the letter
from outside the package: a toy family of one made-up operator, TOY_DOUBLE
(OutputTensor = 2 * InputTensor), with its spec, overlay, cases, oracle,
reference and one planted fault all written here, registered the documented
way (a `Family` record under the entry-point group ``dmlconform.families``
of a package on the path).  ``gen``, ``run`` on cpu and on faulty, and the
reports then work with it, and nothing of dmlconform was edited.

The toy package is laid out the way pip lays out a wheel (its module and a
``*.dist-info`` with entry_points.txt) in a folder on PYTHONPATH, so the
run's worker processes find it too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dmlconform.families import GROUP

SPEC = """\
operator: TOY_DOUBLE
struct: DML_TOY_DOUBLE_OPERATOR_DESC
category: element_wise
introduced: '1_0'
fields:
- name: InputTensor
  c_type: const DML_TENSOR_DESC*
  kind: tensor
  role: input
- name: OutputTensor
  c_type: const DML_TENSOR_DESC*
  kind: tensor
  role: output
formula:
  source: none
constraints:
- kind: same
  tensors: [InputTensor, OutputTensor]
  properties: [DataType, Sizes]
support:
- level: '1_0'
  rows:
  - tensor: InputTensor
    kind: Input
    dims: [1]
    dtypes: [FLOAT32]
  - tensor: OutputTensor
    kind: Output
    dims: [1]
    dtypes: [FLOAT32]
"""

OVERLAY = """\
operator: TOY_DOUBLE
semantics:
  family: toy
  source: made-up.md:1
ambiguities: []
"""

#: The family, as another package would write it: one module.
FAMILY = '''
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dmlconform.cases.model import Case, TensorData
from dmlconform.compare import Alternative
from dmlconform.families import Family
from dmlconform.oracles.base import Expectation
from dmlconform.spec.model import DataType, FeatureLevel, Semantics
from dmlconform.spec.reviewed_checks import Kind


@dataclass(frozen=True, slots=True)
class Toy(Semantics):
    """OutputTensor = 2 * InputTensor."""


SCHEMA = {"type": "object", "additionalProperties": False, "required": ["family", "source"],
          "properties": {"family": {"const": "toy"}, "source": {"type": "string"}}}


def claims(spec):
    return (True, "ok") if isinstance(spec.semantics, Toy) else (False, "")


def generable(spec, level):
    return (True, "ok") if level >= FeatureLevel.parse("1_0") else (False, "before 1_0")


def generate(spec, level, *, seed, large=False, negative=True, keep=None):
    for n in (1, 7, 300):
        case_id = f"TOY_DOUBLE/FLOAT32/1d/n={n}"
        if keep is not None and not keep(case_id, DataType.FLOAT32):
            continue
        x = np.random.default_rng([seed, n]).standard_normal(n).astype(np.float32)
        x.setflags(write=False)
        out = np.zeros(n, np.float32)
        out.setflags(write=False)
        yield Case(case_id, spec.operator, level, DataType.FLOAT32,
                   (TensorData("InputTensor", DataType.FLOAT32, (n,), (1,), x),),
                   (TensorData("OutputTensor", DataType.FLOAT32, (n,), (1,), out),), seed=seed)


class Batch:
    def __init__(self, cases):
        self.x = np.concatenate([c.inputs[0].view().reshape(-1) for c in cases])

    def expect(self, lo, hi):
        exact = (2 * self.x[lo:hi].astype(np.float64)).astype(np.float32)
        return (Expectation(exact, np.zeros(hi - lo), None, (), 0, 1.0, True),)

    def inputs_at(self, output, flat):
        return (("InputTensor", self.x[flat].tolist()),)


class Oracle:
    def bind(self, cases, *, flush_subnormals, float16_accumulation=False):
        return Batch(cases)


def reference(spec, case, buffers):
    return {"OutputTensor": case.inputs[0].view() * np.float32(2)}


def off_by_one(spec, case, buffers):
    """The first element one too large."""
    if spec.operator == "TOY_DOUBLE":
        buffers["OutputTensor"][0] += 1


TOY = Family("toy", claims, generate, lambda spec: Oracle(), generable, None,
             ("toy", Kind(SCHEMA, lambda data: Toy(data["source"]), lambda data, spec: iter(()))),
             reference, {"toy-off-by-one": off_by_one})
'''


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The specs folder of TOY_DOUBLE and an environment whose Python finds the toy package."""
    root = tmp_path_factory.mktemp("toy")
    site = root / "site"
    (site / "toy_family").mkdir(parents=True)
    (site / "toy_family" / "__init__.py").write_text(textwrap.dedent(FAMILY))
    info = site / "toy_family-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-family\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\ntoy = toy_family:TOY\n")
    specs = root / "specs"
    (specs / "reviewed").mkdir(parents=True)
    (specs / "TOY_DOUBLE.yaml").write_text(SPEC)
    (specs / "reviewed" / "TOY_DOUBLE.yaml").write_text(OVERLAY)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH", "")) if p)
    return specs, env


def _dmlconform(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dmlconform", *args], env=env, capture_output=True, text=True,
                          timeout=600, check=False)


def test_the_toy_family_runs_end_to_end(toy: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    specs, env = toy
    gen = _dmlconform(env, "gen", "--specs", str(specs), "--feature-level", "1_0", "-o", str(tmp_path / "cases"))
    assert gen.returncode == 0, gen.stderr
    manifest = json.loads((tmp_path / "cases" / "manifest.json").read_text())
    assert sorted(c["id"] for c in manifest["cases"]) == [f"TOY_DOUBLE/FLOAT32/1d/n={n}" for n in (1, 300, 7)]

    run = _dmlconform(env, "run", "--specs", str(specs), "--feature-level", "1_0", "--no-progress",
                      "-o", str(tmp_path / "cpu"))
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((tmp_path / "cpu" / "report.json").read_text())
    assert [c["outcome"] for c in report["cases"]] == ["PASS"] * 3
    assert (tmp_path / "cpu" / "junit.xml").is_file() and "TOY_DOUBLE" in (tmp_path / "cpu" / "report.html").read_text()

    from_folder = _dmlconform(env, "run", "--specs", str(specs), "--feature-level", "1_0", "--no-progress",
                              "--cases", str(tmp_path / "cases"), "-o", str(tmp_path / "folder"))
    assert from_folder.returncode == 0, from_folder.stdout + from_folder.stderr

    faulty = _dmlconform(env, "run", "--specs", str(specs), "--feature-level", "1_0", "--no-progress",
                         "--backend", "faulty", "--backend-arg", "faults=toy-off-by-one", "-o", str(tmp_path / "faulty"))
    assert faulty.returncode == 1, faulty.stdout + faulty.stderr
    report = json.loads((tmp_path / "faulty" / "report.json").read_text())
    assert [c["outcome"] for c in report["cases"]] == ["FAIL"] * 3
    assert "TOY_DOUBLE/FLOAT32/1d/n=7" in faulty.stdout


def test_a_family_that_cannot_be_loaded_is_one_error_naming_it(tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = site / "broken_family-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-family\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\nbroken = no_such_module:FAMILY\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH", "")) if p)
    run = _dmlconform(env, "run", "--op", "ELEMENT_WISE_ADD", "--no-progress", "-o", str(tmp_path / "r"))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "operator family 'broken' (no_such_module:FAMILY) could not be loaded" in run.stderr
    assert "Traceback" not in run.stderr
