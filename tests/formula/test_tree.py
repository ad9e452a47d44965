"""The formula tree record: ``assignments`` and ``main`` are worked out once,
at construction (issue #21: no per-tree caches keyed by ``id()``), and
equality and the hash stay structural."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest
from hypothesis import given, settings

from dmlconform.formula import parse, to_text
from dmlconform.formula.tree import Comment, FormulaTree
from tests.conftest import REPO
from tests.formula.strategies import trees

PROGRAM = "M = x * 2\n// a comment\nf(x) = M + 1\nN = 3"


def test_assignments_and_main_are_fields_left_out_of_equality_and_repr() -> None:
    tree = parse(PROGRAM)
    assert [a.target for a in tree.assignments] == ["M", "f", "N"]
    assert tree.main.target == "f"  # the function-style statement, not the last one
    assert repr(tree) == f"FormulaTree(statements={tree.statements!r})"
    assert tree == FormulaTree(tree.statements)


def test_the_last_assignment_is_main_without_a_function_style_one() -> None:
    assert parse("M = x * 2\nN = M + 1").main.target == "N"


def test_a_tree_without_an_assignment_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^a formula tree needs at least one assignment such as 'f\(x\) = \.\.\.'$"):
        FormulaTree((Comment("only a comment"),))


@settings(max_examples=50, deadline=None)
@given(trees())
def test_equal_trees_hash_alike(tree: FormulaTree) -> None:
    again = parse(to_text(tree))
    assert again == tree and again is not tree
    assert hash(again) == hash(tree)
    assert {tree: 1}[again] == 1


def test_a_pickled_tree_hashes_as_an_equal_tree_made_where_it_is_loaded() -> None:
    """A string's hash differs between processes: a tree sent to a worker
    process must hash there as an equal tree made there."""
    tree = parse(PROGRAM)
    check = ("import pickle, sys; from dmlconform.formula.tree import FormulaTree; "
             "t = pickle.loads(sys.stdin.buffer.read()); "
             "print(hash(t) == hash(FormulaTree(t.statements)), t.main.target, len(t.assignments))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run([sys.executable, "-c", check], input=pickle.dumps(tree), capture_output=True, env=env,
                          cwd=REPO, timeout=60, check=True)
    assert done.stdout.decode().split() == ["True", "f", "3"]

