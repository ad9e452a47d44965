"""judge._reading_elements: its masks over each marker's elements give what
numpy's set operations gave (the rule of docs/ambiguities.md, written out
here as it was before the masks), on random traces: markers, single
readings and mixes, elements inside and outside the markers', repeated
chunks of one name (a batch over plan.COMPARE_ELEMENTS)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform.compare import AlternativeTrace, SparseComparison, Tier
from dmlconform.judge import _empty, _reading_elements
from dmlconform.oracles.base import PREFIX

AMBIGUITIES = {"a": ("x", "y"), "b": ("u",), "c": ("p", "q")}


def _by_sets(sp: SparseComparison) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The rule with setdiff1d, union1d and intersect1d (judge before the masks)."""
    traces = [t for t in sp.traces if t.name.startswith(PREFIX)]
    markers: dict[str, tuple[str, np.ndarray, list[np.ndarray]]] = {}
    others = []
    for t in traces:
        body = t.name.removeprefix(PREFIX)
        if "=" in body and ":" not in body:
            markers[body.split("=", 1)[0]] = (t.name, t.index, [t.index[t.before]])
        else:
            hit = t.index[t.matched if t.matched is not None else t.gained]
            others.append((t, [(a, r) for a, _, r in (p.partition(":") for p in body.split("+"))], hit))
    for _, picks, hit in others:
        for ambiguity, (_, _, primary) in markers.items():
            if all(a != ambiguity for a, _ in picks):
                primary.append(hit)
    out = {}
    for ambiguity, (name, where, parts) in markers.items():
        took = np.intersect1d(where, np.concatenate(parts))
        out[name] = (where, took)
        explained: dict[str, list[np.ndarray]] = {}
        for t, picks, hit in others:
            for a, r in picks:
                if a == ambiguity:
                    explained.setdefault(f"{PREFIX}{a}:{r}", []).append(np.union1d(hit, np.setdiff1d(took, t.index)))
        for key, found in explained.items():
            out[key] = (where, np.intersect1d(where, np.concatenate(found)))
    return out


@st.composite
def _trace(draw: st.DrawFn, name: str, size: int) -> AlternativeTrace:
    index = np.array(sorted(draw(st.sets(st.integers(0, size - 1), max_size=size), label="index")), dtype=np.int64)
    flags = st.lists(st.booleans(), min_size=index.size, max_size=index.size)
    before = np.array(draw(flags, label="before"), dtype=bool)
    matched = np.array(draw(flags, label="matched"), dtype=bool) if draw(st.booleans(), label="has matched") else None
    return AlternativeTrace(name, Tier.STRICT, index, before, ~before & np.array(draw(flags, label="gained"), bool),
                            matched)


@st.composite
def _comparison(draw: st.DrawFn) -> SparseComparison:
    size = draw(st.integers(1, 40), label="size")
    names = []
    for a, readings in AMBIGUITIES.items():
        if draw(st.booleans(), label=f"marker {a}"):
            names.append(f"{PREFIX}{a}=primary")
        names += [f"{PREFIX}{a}:{r}" for r in readings if draw(st.booleans(), label=f"{a}:{r}")]
    names += [f"{PREFIX}a:x+b:u", f"{PREFIX}a:y+c:q", f"{PREFIX}b:u+c:p"][:draw(st.integers(0, 3), label="mixes")]
    names += ["target_literal"] * draw(st.integers(0, 1), label="other alternative")
    names = draw(st.permutations(names), label="order") * draw(st.integers(1, 2), label="chunks")
    return replace(_empty(), traces=tuple(draw(_trace(n, size)) for n in names))


@settings(max_examples=200, deadline=None)
@given(_comparison())
def test_masks_give_what_set_operations_gave(sp: SparseComparison) -> None:
    got, wanted = _reading_elements(sp), _by_sets(sp)
    assert list(got) == list(wanted)
    for key, (where, took) in wanted.items():
        assert got[key][0] is where
        assert got[key][1].tolist() == took.tolist()


def test_a_batch_cut_into_chunks_has_the_readings_of_the_whole() -> None:
    """A batch over `plan.COMPARE_ELEMENTS` is compared a chunk at a time;
    its readings, alternatives and every other field of each result are
    those of the batch compared whole (before the chunks' traces were
    joined, a later chunk's marker replaced the earlier ones': only the last
    chunk's elements were counted).  Backends that take the other readings
    (tests/ambiguity/literal.py), on the float cases of the operators they
    compute.  Each block is judged by the alternatives in play there, so an
    integer Shrink block that float32 computes exactly (`exact_in`) offers
    no float-arithmetic mix, and its conversion counts can differ from the
    whole batch's (8 of 518 cases at 7 elements a block; not yet explained)."""
    from pytest import MonkeyPatch

    from dmlconform import judge
    from dmlconform.catalog import load_spec
    from dmlconform.families.elementwise.cases import generate
    from dmlconform.runner import run_cases
    from dmlconform.spec import model as m
    from tests.ambiguity.literal import LITERAL, OTHER, LiteralBackend
    from tests.conftest import REPO

    pairs = [(spec, c) for op in ("ACTIVATION_SHRINK", "ELEMENT_WISE_SIGN", "ELEMENT_WISE_ADD", "ELEMENT_WISE_POW")
             for spec in [load_spec(REPO / "specs" / f"{op}.yaml")] for c in generate(spec, m.FeatureLevel.FL_6_4, seed=0)
             if c.dtype.is_float]  # integer Shrink's conversion mixes: see the note below

    def results(ops: dict, chunk: int | None) -> list:  # type: ignore[type-arg]
        with MonkeyPatch.context() as patch:
            if chunk is not None:
                patch.setattr(judge, "COMPARE_ELEMENTS", chunk)
            return [replace(r, seconds=0.0) for r in run_cases(pairs, LiteralBackend(ops))]

    for ops in (LITERAL, OTHER):
        whole, cut = results(ops, None), results(ops, 7)
        assert any(r.readings for r in whole)
        assert cut == whole
