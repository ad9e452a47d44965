"""The onnxruntime backend: the mapping on known values, session caching,
batching, clean rejections and a known disagreement reported as FAIL."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dmlconform.backends.base import NotSupportedError
from dmlconform.backends.onnxruntime import backend as onnxruntime_backend
from dmlconform.backends.onnxruntime.backend import MAPPINGS, OnnxRuntimeBackend, plan
from dmlconform.cases.model import Case, TensorData, packed_strides
from dmlconform.catalog import load_spec
from dmlconform.families.elementwise.cases import generate
from dmlconform.results import Outcome
from dmlconform.runner import bind, run_cases
from dmlconform.spec import model as m
from tests.conftest import REPO

pytest.importorskip("onnxruntime", reason="the onnxruntime extra is not installed (pip install 'dmlconform[onnxruntime]')")


def _spec(op: str) -> m.Spec:
    return load_spec(REPO / "specs" / f"{op}.yaml")


def _case(op: str, x: list[float], dtype: m.DataType = m.DataType.FLOAT32, **attrs: float) -> Case:
    arr = np.asarray(x, dtype=dtype.name.lower())
    sizes = (arr.size,)
    return Case(id=f"{op}/test", operator=op, level=m.FeatureLevel.FL_6_4, dtype=dtype,
                inputs=(TensorData("InputTensor", dtype, sizes, packed_strides(sizes), arr),),
                outputs=(TensorData("OutputTensor", dtype, sizes, packed_strides(sizes), np.zeros_like(arr)),),
                attributes=tuple(attrs.items()))


def _run(backend: OnnxRuntimeBackend, op: str, x: list[float], **attrs: float) -> np.ndarray:
    case = _case(op, x, **attrs)
    buffers = bind(case)
    backend.run(_spec(op), case, buffers)
    return buffers["OutputTensor"]


def test_hard_sigmoid_passes_the_docs_values_not_onnx_defaults() -> None:
    # Alpha=1.5, Beta=-0.25: ONNX's defaults (0.2, 0.5) would give 0.6 at x=0.5.
    out = _run(OnnxRuntimeBackend(), "ACTIVATION_HARD_SIGMOID", [0.5, -1.0, 2.0], Alpha=1.5, Beta=-0.25)
    assert out.tolist() == [0.5, 0.0, 1.0]
    p = plan(_spec("ACTIVATION_HARD_SIGMOID"), _case("ACTIVATION_HARD_SIGMOID", [0.0], Alpha=1.5, Beta=-0.25))
    assert p.attrs == {"alpha": 1.5, "beta": -0.25}



@pytest.mark.parametrize(("alpha", "beta"), [(0.2, 0.5), (1.5, -0.25), (0.0, 0.5), (-0.2, 0.5), (3.4e38, 1.2),
                                             (1e-40, 0.3), (1 / 6, 0.5)])
def test_hard_sigmoid_kernel_opset_gives_the_function_bodys_bits(alpha: float, beta: float) -> None:
    # HardSigmoid maps at KERNEL_OPSET for a cheaper session: that is only sound while
    # onnxruntime's float16 kernel (behind casts) gives what BASE_OPSET's function body gives,
    # on every float16 input, NaN payloads included.
    from dmlconform.backends.onnxruntime.backend import build_model
    from dmlconform.backends.onnxruntime.node import BASE_OPSET, KERNEL_OPSET

    assert MAPPINGS["ACTIVATION_HARD_SIGMOID"].opset == KERNEL_OPSET > BASE_OPSET
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    case = _case("ACTIVATION_HARD_SIGMOID", [0.0], m.DataType.FLOAT16, Alpha=alpha, Beta=beta)
    p = plan(_spec("ACTIVATION_HARD_SIGMOID"), case)
    backend, got = OnnxRuntimeBackend(), {}
    for opset in (BASE_OPSET, KERNEL_OPSET):
        q = dataclasses.replace(p, mapping=dataclasses.replace(p.mapping, opset=opset))
        (got[opset],) = backend._build(build_model(q, case), q, case).run(None, {"x0": x})
    assert got[KERNEL_OPSET].view(np.uint16).tolist() == got[BASE_OPSET].view(np.uint16).tolist()


def test_shrink_maps_threshold_to_lambd_and_bias_to_bias() -> None:
    p = plan(_spec("ACTIVATION_SHRINK"), _case("ACTIVATION_SHRINK", [0.0], Threshold=1.0, Bias=0.25))
    assert p.mapping.op_type == "Shrink" and p.attrs == {"lambd": 1.0, "bias": 0.25}
    out = _run(OnnxRuntimeBackend(), "ACTIVATION_SHRINK", [2.0, -2.0, 0.5], Threshold=1.0, Bias=0.25)
    assert out.tolist() == [1.75, -1.75, 0.0]


@pytest.mark.parametrize(("op", "attrs", "why"), [
    ("ACTIVATION_SHRINK", {"Threshold": -0.5, "Bias": 0.0}, "Threshold=-0.5 < 0"),
    ("ACTIVATION_SOFTPLUS", {"Steepness": 2.0}, "Steepness=2.0: ONNX Softplus"),
    ("ACTIVATION_HARD_SWISH", {"Alpha": 0.2, "Beta": 0.5}, "fixes it at 1/6"),
    ("ELEMENT_WISE_CLIP", {"Min": 3.0, "Max": 2.0}, "Min=3.0 > Max=2.0"),
    ("ACTIVATION_LINEAR", {"Alpha": 1.0, "Beta": 0.0}, "not mapped"),
])
def test_what_onnx_cannot_express_is_not_supported(op: str, attrs: dict[str, float], why: str) -> None:
    support = OnnxRuntimeBackend().supports(_spec(op), _case(op, [1.0], **attrs))
    assert not support.supported and why in (support.reason or "")



def test_plans_depend_on_spec_attributes_and_types() -> None:
    backend, spec = OnnxRuntimeBackend(), _spec("ACTIVATION_HARD_SIGMOID")
    first = backend.plan(spec, _case("ACTIVATION_HARD_SIGMOID", [0.0], Alpha=1.5, Beta=-0.25))
    assert backend.plan(spec, _case("ACTIVATION_HARD_SIGMOID", [1.0, 2.0], Alpha=1.5, Beta=-0.25)) == first
    assert backend.plan(spec, _case("ACTIVATION_HARD_SIGMOID", [0.0], Alpha=0.5, Beta=-0.25)).attrs["alpha"] == 0.5
    half = _case("ACTIVATION_HARD_SIGMOID", [0.0], m.DataType.FLOAT16, Alpha=1.5, Beta=-0.25)
    assert backend.plan(spec, half).key[2] != first.key[2]          # the tensor types are part of the key
    # the doc's default enters the plan: another spec's default is another plan
    other = dataclasses.replace(spec, fields=tuple(dataclasses.replace(f, default=0.75) if f.name == "Alpha" else f
                                                   for f in spec.fields))
    default = _case("ACTIVATION_HARD_SIGMOID", [0.0], Beta=0.5)
    assert backend.plan(spec, default).attrs["alpha"] == pytest.approx(0.2)
    assert backend.plan(other, default).attrs["alpha"] == 0.75
    # a rejection gives its reason, the same each time
    linear, bad = _spec("ELEMENT_WISE_CLIP"), _case("ELEMENT_WISE_CLIP", [1.0], Min=3.0, Max=2.0)
    reasons = [backend.supports(linear, bad).reason for _ in range(2)]
    assert reasons[0] == reasons[1] and "Min=3.0 > Max=2.0" in (reasons[0] or "")


def test_integer_division_by_zero_is_rejected_not_run() -> None:
    spec = _spec("ELEMENT_WISE_DIVIDE")
    case = next(c for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0)
                if c.dtype is m.DataType.INT32 and np.any(c.input("BTensor").buffer == 0))
    with pytest.raises(NotSupportedError, match="by zero"):
        OnnxRuntimeBackend().run(spec, case, bind(case))


def test_sessions_are_cached_per_key_across_ranks_and_layouts() -> None:
    spec = _spec("ACTIVATION_SOFTSIGN")
    cases = [c for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0) if c.dtype is m.DataType.FLOAT32]
    backend = OnnxRuntimeBackend()
    results = run_cases([(spec, c) for c in cases], backend)   # one run_batch call: one session built
    assert {r.outcome for r in results} == {Outcome.PASS}
    assert backend.misses == 1
    one_by_one = OnnxRuntimeBackend()
    for case in cases:                                         # every rank and layout: the same session
        one_by_one.run(spec, case, bind(case))
    assert one_by_one.misses == 1 and one_by_one.hits == len(cases) - 1


def test_run_batch_equals_run_one_by_one() -> None:
    spec = _spec("ACTIVATION_SHRINK")
    cases = [c for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0) if c.dtype is m.DataType.FLOAT16]
    single = [bind(c) for c in cases]
    for c, b in zip(cases, single):
        OnnxRuntimeBackend().run_batch([(spec, c, b)])
    batched = [bind(c) for c in cases]
    backend = OnnxRuntimeBackend()
    errors = backend.run_batch([(spec, c, b) for c, b in zip(cases, batched)])
    assert all(e is None or isinstance(e, NotSupportedError) for e in errors)
    for c, s, b in zip(cases, single, batched):
        assert s["OutputTensor"].tobytes() == b["OutputTensor"].tobytes(), c.id
    assert backend.misses < len(cases)


def test_shrink_of_nan_takes_the_formula_reading() -> None:
    # The doc's "0, otherwise" meets the spec's nan_policy propagate: onnxruntime gives 0 for NaN,
    # the formula read literally: the ambiguity's other reading, a PASS that says so (issue #22).
    spec = _spec("ACTIVATION_SHRINK")
    case = _case("ACTIVATION_SHRINK", [float("nan"), 1.0], Threshold=0.5, Bias=0.0)
    (result,) = run_cases([(spec, case)], OnnxRuntimeBackend())
    assert result.outcome is Outcome.PASS
    assert result.readings == (("reading:nan:formula", 1, 1), ("reading:nan=propagate", 1, 0))


def test_unknown_provider_is_unavailable_with_the_reason() -> None:
    info = OnnxRuntimeBackend(provider="NoSuchExecutionProvider").info()
    assert not info.available and "NoSuchExecutionProvider" in (info.reason or "")


def test_every_mapping_names_an_onnx_operator() -> None:
    from onnx import defs

    for op, mapping in MAPPINGS.items():
        assert defs.has(mapping.op_type), (op, mapping.op_type)
        assert dataclasses.is_dataclass(mapping)


def _hard_sigmoid_items(dtype: m.DataType = m.DataType.FLOAT32):  # type: ignore[no-untyped-def]
    spec = _spec("ACTIVATION_HARD_SIGMOID")
    cases = [c for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0) if c.dtype is dtype and c.expect_supported]
    assert len({c.attributes for c in cases}) > 2  # several attribute sets, one family
    return spec, cases


def _alone(spec: m.Spec, cases: list[Case], backend: OnnxRuntimeBackend):  # type: ignore[no-untyped-def]
    """Each case through its own ``run_batch`` call: the per-key path."""
    out = []
    for c in cases:
        b = bind(c)
        (error,) = backend.run_batch([(spec, c, b)])
        out.append((b, error))
    return out


def test_attribute_sets_of_one_family_share_one_session_and_equal_one_call_per_case(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(onnxruntime_backend, "FAMILY_NODES", 4)
    spec, cases = _hard_sigmoid_items()
    single = _alone(spec, cases, OnnxRuntimeBackend())
    backend = OnnxRuntimeBackend()
    batched = [bind(c) for c in cases]
    assert backend.run_batch([(spec, c, b) for c, b in zip(cases, batched)]) == [None] * len(cases)
    for c, (s, error), b in zip(cases, single, batched):
        assert error is None and s["OutputTensor"].tobytes() == b["OutputTensor"].tobytes(), c.id
    keys = tuple(dict.fromkeys(plan(spec, c).key for c in cases))
    assert len(keys) % 4 > 1  # every session has several nodes
    chunks = [keys[lo:lo + 4] for lo in range(0, len(keys), 4)]
    assert (backend.misses, backend.hits, list(backend.sessions)) == (len(chunks), 0, chunks)
    backend.run_batch([(spec, c, bind(c)) for c in cases])  # the same family again: the cached sessions
    assert (backend.misses, backend.hits) == (len(chunks), len(chunks))


@pytest.mark.parametrize("fails", ["build", "run"])
def test_a_family_session_that_fails_falls_back_to_one_session_per_key(monkeypatch, fails: str) -> None:  # type: ignore[no-untyped-def]
    """One attribute set that onnxruntime rejects (here: a session build that
    refuses any model with that node) fails the family's session; each key
    then runs alone, and the rejected one's cases get the error they get
    alone.  A family session whose run raises falls back the same way."""
    monkeypatch.setattr(onnxruntime_backend, "FAMILY_NODES", 64)  # one session for the family
    spec, cases = _hard_sigmoid_items()
    bad = plan(spec, cases[0]).attrs["alpha"]
    build = OnnxRuntimeBackend._build

    class Broken:
        def run(self, *args: object) -> None:
            raise RuntimeError("the family's run failed")

    def refusing(self, model, p, case):  # type: ignore[no-untyped-def]
        alphas = [a.f for n in model.graph.node for a in n.attribute if a.name == "alpha"]
        if fails == "build" and bad in alphas:
            return NotSupportedError(f"alpha={bad} refused")
        if fails == "run" and len(model.graph.node) > 1:
            return Broken()
        return build(self, model, p, case)

    monkeypatch.setattr(OnnxRuntimeBackend, "_build", refusing)
    single = _alone(spec, cases, OnnxRuntimeBackend())
    backend = OnnxRuntimeBackend()
    batched = [bind(c) for c in cases]
    errors = backend.run_batch([(spec, c, b) for c, b in zip(cases, batched)])
    rejected = [plan(spec, c).attrs["alpha"] == bad and fails == "build" for c in cases]
    assert any(rejected) == (fails == "build") and not all(rejected)
    for c, (s, alone), b, error, no in zip(cases, single, batched, errors, rejected):
        assert repr(error) == repr(alone), c.id
        assert (error is not None) == no, c.id
        if not no:
            assert s["OutputTensor"].tobytes() == b["OutputTensor"].tobytes(), c.id
    keys = len({plan(spec, c).key for c in cases})
    assert backend.misses == 1 + keys  # the family's session, then one per key


def _all_types_of(op: str):  # type: ignore[no-untyped-def]
    spec = _spec(op)
    cases = list(generate(spec, m.FeatureLevel.FL_6_4, seed=0))
    assert {c.dtype for c in cases} == {m.DataType.FLOAT32, m.DataType.FLOAT16, m.DataType.FLOAT64}
    return spec, cases, _alone(spec, cases, OnnxRuntimeBackend())


def _same_as_alone(spec, cases, single, backend):  # type: ignore[no-untyped-def]
    """One ``run_batch`` call for ``cases``: each error and output what
    the case gets alone (``single``); returns the errors."""
    batched = [bind(c) for c in cases]
    errors = backend.run_batch([(spec, c, b) for c, b in zip(cases, batched)])
    for c, (s, alone), b, error in zip(cases, single, batched, errors):
        assert repr(error) == repr(alone), c.id
        if error is None:
            assert s["OutputTensor"].tobytes() == b["OutputTensor"].tobytes(), c.id
    return errors


def test_data_types_of_one_operator_share_sessions_and_probes_outside_the_tables_run_apart() -> None:
    """HardSigmoid's float32 and float16 keys run through shared sessions,
    `FAMILY_NODES` at a time; the float64 probe (outside the tables, and
    HardSigmoid-22 has no float64 kernel) runs in a session of its own, so
    its rejection fails no shared one.  Outputs and errors are each case's
    own."""
    spec, cases, single = _all_types_of("ACTIVATION_HARD_SIGMOID")
    backend = OnnxRuntimeBackend()
    errors = _same_as_alone(spec, cases, single, backend)
    assert [e is not None for e in errors] == [c.dtype is m.DataType.FLOAT64 for c in cases]
    keys = {plan(spec, c).key for c in cases if c.expect_supported}
    shared = [k for k in backend.sessions if isinstance(k[0], tuple)]
    assert any(len({key[2] for key in k}) > 1 for k in shared)  # float32 and float16 nodes in one session
    assert not any(isinstance(backend.sessions[k], Exception) for k in shared)
    assert len(shared) == -(-len(keys) // onnxruntime_backend.FAMILY_NODES)
    (f64,) = {plan(spec, c).key for c in cases if c.dtype is m.DataType.FLOAT64}
    assert isinstance(backend.sessions[f64], NotSupportedError)


def test_a_shared_session_that_fails_runs_per_data_type_before_per_key(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A session of float32 and float16 nodes that cannot be built: its keys
    run in one session per data type, each of which builds, so no key needs
    a session of its own."""
    build = OnnxRuntimeBackend._build

    def refusing(self, model, p, case):  # type: ignore[no-untyped-def]
        types = {i.type.tensor_type.elem_type for i in model.graph.input}
        if len(types) > 1:
            return NotSupportedError("mixed types refused")
        return build(self, model, p, case)

    spec, cases, single = _all_types_of("ACTIVATION_HARD_SIGMOID")
    monkeypatch.setattr(OnnxRuntimeBackend, "_build", refusing)
    backend = OnnxRuntimeBackend()
    _same_as_alone(spec, cases, single, backend)
    failed = [k for k, v in backend.sessions.items() if isinstance(v, Exception) and isinstance(k[0], tuple)]
    assert failed and all(len({key[2] for key in k}) > 1 for k in failed)
    singles = [k for k in backend.sessions if not isinstance(k[0], tuple)]
    assert [k[2][0][1] for k in singles] == ["FLOAT64"]  # only the probe ran alone


def _helper_node(p, case, x, s, y, n):  # type: ignore[no-untyped-def]
    """`_node` as onnx.helper spells it (make_tensor_value_info)."""
    from onnx import helper

    def onnx_type(dtype: np.dtype) -> int:
        return helper.np_dtype_to_tensor_dtype(dtype)

    from dmlconform.spec.model import numpy_dtype

    bool_type = onnx_type(np.dtype(bool))
    inputs = [helper.make_tensor_value_info(
        f"{x}{j}", bool_type if t.name in p.mapping.bool_inputs else onnx_type(numpy_dtype(t.dtype)), [n])
        for j, t in enumerate(case.inputs)]
    inputs += [helper.make_tensor_value_info(f"{s}{j}", onnx_type(numpy_dtype(case.dtype)), [])
               for j in range(len(p.scalars))]
    node = helper.make_node(p.mapping.op_type, [i.name for i in inputs], [y], **p.attrs)
    output = helper.make_tensor_value_info(y, onnx_type(onnxruntime_backend._output_type(p.mapping, case)), [n])
    return inputs, node, output


def test_models_are_the_bytes_onnx_helper_makes_for_every_key_of_the_default_suite(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The value infos are written as protos directly (`_value_info`); each
    model the default suite needs, one per key and one per family, is byte
    for byte the one onnx.helper's checked constructors make."""
    backend = OnnxRuntimeBackend()
    keys: dict[object, tuple[object, Case]] = {}
    for op in (op for op, mapping in MAPPINGS.items() if mapping.runner is None):  # a runner builds its own
        spec = _spec(op)
        for case in generate(spec, m.FeatureLevel.FL_6_4, seed=0):
            try:
                p = backend.plan(spec, case)
            except NotSupportedError:
                continue
            keys.setdefault(p.key, (p, case))
    assert len(keys) > 200
    families: dict[object, list[tuple[object, Case]]] = {}
    for p, case in keys.values():
        families.setdefault(p.family, []).append((p, case))
    ours = [onnxruntime_backend.build_model(p, c).SerializeToString() for p, c in keys.values()]
    ours += [onnxruntime_backend.build_family_model([p for p, _ in f], [c for _, c in f]).SerializeToString()
             for f in families.values()]
    monkeypatch.setattr(onnxruntime_backend, "_node", _helper_node)
    theirs = [onnxruntime_backend.build_model(p, c).SerializeToString() for p, c in keys.values()]
    theirs += [onnxruntime_backend.build_family_model([p for p, _ in f], [c for _, c in f]).SerializeToString()
               for f in families.values()]
    assert ours == theirs


def test_an_operator_without_a_mapping_is_not_supported_not_fail() -> None:
    # issue #22 item 5: ACTIVATION_LINEAR has no one-node ONNX equivalent; every case of it is
    # NOT_SUPPORTED with that reason, before any support query (before: FAIL "rejected a
    # configuration that the 6_4 table supports").
    spec = _spec("ACTIVATION_LINEAR")
    assert OnnxRuntimeBackend().implements(spec) == "ONNX has no one-node equivalent of ACTIVATION_LINEAR (not mapped)"
    cases = list(generate(spec, m.FeatureLevel.FL_6_4, seed=0, negative=False))
    results = run_cases([(spec, c) for c in cases], OnnxRuntimeBackend())
    assert {r.outcome for r in results} == {Outcome.NOT_SUPPORTED}
    assert {r.message for r in results} == {
        "not implemented: ONNX has no one-node equivalent of ACTIVATION_LINEAR (not mapped)"}


def test_an_in_table_rejection_of_an_implemented_operator_is_refused_not_fail() -> None:
    # issue #33 item 4: onnxruntime implements a subset of DirectML's tables (BackendInfo.subset), so
    # its mapping's refusal of a configuration the table supports is NOT_SUPPORTED with its reason,
    # counted as refused (before: FAIL "rejected a configuration that the 6_4 table supports").
    spec = _spec("ACTIVATION_SHRINK")
    assert OnnxRuntimeBackend().implements(spec) is None
    case = _case("ACTIVATION_SHRINK", [1.0], Threshold=-0.5, Bias=0.0)
    (result,) = run_cases([(spec, case)], OnnxRuntimeBackend())
    assert result.outcome is Outcome.NOT_SUPPORTED and result.refused and "Threshold=-0.5 < 0" in result.message


def test_an_operator_with_several_outputs_is_not_implemented() -> None:
    table = {"ADAM_OPTIMIZER": MAPPINGS["ACTIVATION_SHRINK"]}   # a mapping has one output
    assert onnxruntime_backend.implements(table, _spec("ADAM_OPTIMIZER"), "no") == (
        "ADAM_OPTIMIZER: 3 outputs (OutputParametersTensor, OutputFirstMomentTensor, OutputSecondMomentTensor); "
        "the mapping has one")


#: One operator of each family whose node needs the case's shapes (`backends.onnxruntime.shaped`).
_SHAPED = ("ACTIVATION_SOFTMAX1", "REDUCE", "TOP_K1", "CUMULATIVE_SUMMATION", "GEMM", "MATRIX_MULTIPLY_INTEGER")


def test_the_shaped_families_are_entries_of_the_one_mapping_table() -> None:
    # One mechanism: each shaped family is an OnnxMapping with a runner and a check, so
    # implements/supports/run_batch have no family's special path.
    for op in _SHAPED:
        mapping = MAPPINGS[op]
        assert mapping.runner is not None and mapping.check is not None, op
        assert OnnxRuntimeBackend().implements(_spec(op)) is None, op
    assert MAPPINGS["TOP_K1"].outputs == 2


@pytest.mark.parametrize("op", _SHAPED)
def test_the_shaped_families_share_the_session_cache(op: str) -> None:
    from dmlconform.families import cases_of

    spec = _spec(op)
    case = next(c for c in cases_of(spec, m.FeatureLevel.FL_6_4, seed=0) if c.expect_supported
                and OnnxRuntimeBackend().supports(spec, c).supported)
    backend = OnnxRuntimeBackend()
    first, second = bind(case), bind(case)
    backend.run(spec, case, first)
    backend.run(spec, case, second)                            # the same model: the cached session
    assert (backend.misses, backend.hits) == (1, 1)
    assert all(np.array_equal(first[o.name], second[o.name], equal_nan=True) for o in case.outputs)


def test_a_cached_build_error_names_the_node_built_whichever_operator_asked_first() -> None:
    # REDUCE's argmax cases and ARGMAX's share a session key (the node, types, shape, axes); the
    # error cached for a type onnxruntime has no ArgMax kernel for names ArgMax either way, not
    # the spec's table entry (REDUCE's ReduceSum) of whichever case built it first.
    from dmlconform.families import cases_of

    spec = _spec("REDUCE")
    case = next(cases_of(spec, m.FeatureLevel.FL_6_4, seed=0, keep=lambda i, _: i.startswith("REDUCE/UINT32/")
                         and "/argmax/" in i))
    with pytest.raises(NotSupportedError, match=r"cannot run ArgMax on UINT32: "):
        OnnxRuntimeBackend().run(spec, case, bind(case))
