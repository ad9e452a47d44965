"""Sharding: disjoint, covering, stable across processes and Python versions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlconform import suite
from dmlconform.catalog import load_spec
from dmlconform.gating.shard import Shard, parse_shard, shard_of
from dmlconform.spec.model import FeatureLevel, Spec


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_shards_are_disjoint_and_cover(data) -> None:  # type: ignore[no-untyped-def]
    ids = data.draw(st.lists(st.text(max_size=40), unique=True, max_size=60), label="ids")
    n = data.draw(st.integers(1, 16), label="n")
    holders = {i: [k for k in range(1, n + 1) if Shard(k, n).holds(i)] for i in ids}
    assert all(len(ks) == 1 for ks in holders.values())              # each case in exactly one shard
    assert all(1 <= shard_of(i, n) <= n for i in ids)


def test_stable_values() -> None:
    """Pinned (blake2b, 8 bytes, big-endian, mod N): another hash, or Python's
    per-process salted hash(), would move cases between the shards of a CI matrix."""
    ids = ["ACTIVATION_SOFTSIGN/FLOAT32/8d/edges", "ELEMENT_WISE_SIGN/FLOAT16/1d/edges", ""]
    assert [shard_of(i, 8) for i in ids] == [7, 7, 5]
    assert [shard_of(i, 3) for i in ids] == [2, 2, 1]


@pytest.mark.parametrize(("text", "message"), [
    ("3", "'3' is not K/N; write e.g. 3/8 for the third of eight shards"),
    ("0/4", "0/4: K must be between 1 and N"),
    ("5/4", "5/4: K must be between 1 and N"),
    ("1/0", "'1/0': N must be 1 or more"),
    ("a/b", "'a/b' is not K/N"),
])
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_shard(text)


def test_parse() -> None:
    assert parse_shard(" 3 / 8 ") == Shard(3, 8) and str(Shard(3, 8)) == "3/8"


def test_a_shard_generates_its_own_cases_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21: ``--shard 1/16`` draws the values of about 1/16 of the suite
    (generate's ``keep``), each case the very one of the whole suite and in the
    shard the whole suite would give it."""
    from pathlib import Path

    from dmlconform.cases import draws
    from dmlconform.catalog import load_spec
    from dmlconform.families.elementwise.cases import generate
    from dmlconform.spec.model import FeatureLevel

    specs = [load_spec(Path("specs") / f"{op}.yaml") for op in ("ACTIVATION_SHRINK", "ELEMENT_WISE_ADD", "ADAM_OPTIMIZER")]
    real = draws.fill
    drawn: list[int] = []

    def counting(requests):  # type: ignore[no-untyped-def]
        drawn.append(len(requests))
        return real(requests)

    whole = {c.id: c for s in specs for c in generate(s, FeatureLevel.FL_6_4, seed=0)}
    shard = Shard(1, 16)
    monkeypatch.setattr(draws, "fill", counting)
    kept = [c for s in specs for c in generate(s, FeatureLevel.FL_6_4, seed=0, keep=lambda i, d: shard.holds(i))]
    assert {c.id for c in kept} == {i for i in whole if shard.holds(i)}
    assert 0.5 / 16 < len(kept) / len(whole) < 2 / 16
    assert sum(drawn) == sum(len(c.inputs) for c in kept)   # values drawn for the shard's cases alone
    for case in kept:
        assert all(np.array_equal(a.buffer, b.buffer, equal_nan=True)
                   for a, b in zip(case.inputs, whole[case.id].inputs))



@pytest.fixture(scope="module")
def one_of_each_family() -> tuple[list[tuple[Path, Spec]], list[str]]:
    """One operator of each family (formula, contraction, reduction,
    sequence, value-scale, bitwise) and the case ids of their whole suite."""
    ops = ("ACTIVATION_SHRINK", "GEMM", "REDUCE", "CUMULATIVE_SUMMATION", "VALUE_SCALE_2D", "ELEMENT_WISE_BIT_AND")
    specs = [(Path(f"{op}.yaml"), load_spec(Path("specs") / f"{op}.yaml")) for op in ops]
    whole = _ids(specs, suite.Selection())
    assert len({i.split("/")[0] for i in whole}) == len(ops)
    return specs, whole


def _ids(specs: list[tuple[Path, Spec]], selection: suite.Selection) -> list[str]:
    pairs, skipped = suite.pairs(specs, FeatureLevel.FL_6_4, seed=0, large=False, cases=None, selection=selection)
    assert skipped == []
    return [case.id for _, case in pairs]


@pytest.mark.parametrize("n", [1, 2, 16] + [pytest.param(n, marks=pytest.mark.slow) for n in range(3, 16)])
def test_the_shards_of_a_suite_are_its_cases_split_by_shard_of(
        one_of_each_family: tuple[list[tuple[Path, Spec]], list[str]], n: int) -> None:
    """Shard K/N runs exactly the cases of the whole suite whose `shard_of`
    is K, in the suite's order: together the N shards are the suite, none
    twice (the generators make only the ids of other shards' cases; issue
    #31, item 6)."""
    specs, whole = one_of_each_family
    shards = [_ids(specs, suite.Selection(shard=Shard(k, n))) for k in range(1, n + 1)]
    assert shards == [[i for i in whole if shard_of(i, n) == k] for k in range(1, n + 1)]
