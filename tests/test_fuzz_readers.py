"""Every reader of a user's file, fed mutations of a real file of its kind
(issue 20, part 8): a reader either returns or raises one of our located
errors (`DmlconformError`), never another exception (a traceback, exit 4).

The mutations are what damaged and hostile files look like: bytes flipped,
the file cut short, hostile fragments spliced in (deep nesting, YAML anchors
and tags, huge and non-finite numbers, a formula nested past its limit, NUL
bytes, half of a UTF-8 sequence).  tests/test_hostile.py runs the committed
hostile files through the command line under memory and time limits; this
module explores around the real files, in this process.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dmlconform.cases.store import read_cases, read_npy
from dmlconform.errors import DmlconformError
from dmlconform.gating.baseline import read_baseline
from dmlconform.gating.overrides import read_overrides
from dmlconform.lint.baseline import read_baseline as read_lint_baseline
from dmlconform.report import json_report
from dmlconform.spec.extract import extract_page
from dmlconform.spec.load import loads_spec
from tests.conftest import OPERATORS, REPO, require_corpus

HOSTILE = REPO / "tests" / "hostile"
FRAGMENTS = (
    b"[" * 200, b"{a: " * 100, b"&x [1]\n*x", b"!!python/object/apply:os.system ['true']", b"1e999999999",
    b"-.nan", b".inf", b"\x00", b"\xe2\x82", b"\xff\xfe", b"((((((((((((((((((((((((((((((((((((x",
    b"exp(exp(exp(exp(x))))", b"999999999999999999999999999999999999", b"'", b'"', b"\\u0000", b"\n---\n",
    b"| a | b |\n|---|", b"```", b"1 to 999999999", b"NaN", b"Infinity", b"-0", b"[[[[[[[[[[[[[[[[",
)
#: Per example: a few mutations of the base text, each at a random place.
_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def mutated(draw: st.DrawFn, base: bytes) -> bytes:
    """``base`` with up to four edits: a byte replaced, a fragment spliced in,
    a span deleted, or the text cut short."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4), label="edits")):
        at = draw(st.integers(0, len(data)), label="where")
        edit = draw(st.sampled_from(("flip", "splice", "delete", "cut")), label="edit")
        if edit == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255), label="byte")
        elif edit == "splice":
            data[at:at] = draw(st.sampled_from(FRAGMENTS), label="fragment")
        elif edit == "delete":
            del data[at:at + draw(st.integers(1, 64), label="span")]
        elif edit == "cut":
            del data[at:]
    return bytes(data)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


_SPEC = (REPO / "specs" / "ACTIVATION_SHRINK.yaml").read_bytes()


@_SETTINGS
@given(raw=mutated(_SPEC))
def test_a_mutated_spec_loads_or_is_one_located_error(raw: bytes) -> None:
    try:
        loads_spec(_text(raw), path="specs/ACTIVATION_SHRINK.yaml")
    except DmlconformError as exc:
        assert exc.render().startswith("specs/ACTIVATION_SHRINK.yaml")


@_SETTINGS
@given(data=st.data())
def test_a_mutated_doc_page_extracts_or_is_one_located_error(data: st.DataObject) -> None:
    require_corpus()
    page = OPERATORS / "sdk-api" / "ns-directml-dml_activation_shrink_operator_desc.md"
    raw = data.draw(mutated(page.read_bytes()), label="page")
    try:
        extract_page(_text(raw), path=page, display="page.md")
    except DmlconformError as exc:
        assert "page.md" in exc.render()


def _report_text() -> bytes:
    return (HOSTILE / "good-report.json").read_bytes()


@_SETTINGS
@given(raw=mutated(_report_text()))
def test_a_mutated_report_reads_or_is_one_located_error(raw: bytes) -> None:
    try:
        json_report.loads(_text(raw), path="r.json")
    except DmlconformError as exc:
        assert "r.json" in exc.render()


@_SETTINGS
@given(raw=mutated((HOSTILE / "good-baseline.yaml").read_bytes()), kind=st.sampled_from(("baseline", "tolerances")))
def test_a_mutated_gating_file_reads_or_is_one_located_error(tmp_path_factory, raw: bytes, kind: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("gating") / "file.yaml"
    path.write_bytes(raw)
    try:
        if kind == "baseline":
            read_baseline(path)
        else:
            read_overrides(path, operators={"ACTIVATION_SOFTSIGN"})
    except DmlconformError as exc:
        assert str(path) in exc.render()


_GOOD = HOSTILE / "cases" / "good"


@_SETTINGS
@given(raw=mutated((_GOOD / "manifest.json").read_bytes()))
def test_a_mutated_manifest_reads_or_is_one_located_error(tmp_path_factory, raw: bytes) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("cases") / "c"
    shutil.copytree(_GOOD, folder)
    (folder / "manifest.json").write_bytes(raw)
    try:
        read_cases(folder)
    except DmlconformError as exc:
        assert str(folder) in exc.render()


@_SETTINGS
@given(raw=mutated(next(_GOOD.glob("*.InputTensor.npy")).read_bytes()))
def test_a_mutated_npy_file_loads_or_is_one_located_error(tmp_path_factory, raw: bytes) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("npy") / "00000.InputTensor.npy"
    path.write_bytes(raw)
    try:
        array = read_npy(path, np.dtype(np.float32), 1)
    except DmlconformError as exc:
        assert str(path) in exc.render()
    else:
        assert array.ndim == 1 and array.dtype == np.float32 and not array.flags.writeable


def test_the_bases_are_good(tmp_path: Path) -> None:
    """Unmutated, every base file reads: the mutations start from a valid file."""
    loads_spec(_SPEC.decode(), path="s.yaml")
    json_report.loads(_report_text().decode(), path="r.json")
    read_baseline(HOSTILE / "good-baseline.yaml")
    assert read_cases(_GOOD)


_LINT_BASELINE = (REPO / "specs" / "lint-baseline.yml").read_bytes()


@_SETTINGS
@given(raw=mutated(_LINT_BASELINE))
def test_a_mutated_lint_baseline_reads_or_is_one_located_error(tmp_path_factory, raw: bytes) -> None:  # type: ignore[no-untyped-def]
    """The shipped lint baseline, damaged: read, or a located error at the file."""
    path = tmp_path_factory.mktemp("lint") / "lint-baseline.yml"
    path.write_bytes(raw)
    try:
        read_lint_baseline(path)
    except DmlconformError as exc:
        assert exc.render().startswith(str(path))
