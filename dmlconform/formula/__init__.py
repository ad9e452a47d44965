"""The formula engine: the docs' formula text as a tree, and the oracle.

DESIGN.md, "The spec" (``formula.parsed``) and "The oracle".  Modules, in data
flow order:

* `tree`: the frozen node records; `parser.parse` text -> tree (no eval, no
  Python ast); `printer.to_text` tree -> canonical text.
* `classify`: a doc block -> `Parsed` (with how it binds to the operator's
  fields) or `NotParsed(reason)`.
* `expand`: library calls (``Sigmoid``, ``HardSigmoid``) and the erf integral
  rewritten into primitives (`functions`).
* `oracle.evaluate`: expected values in the target type, error bounds and
  accepted alternatives (`evaluate`, `bounds`, `integers`, `floatrun`,
  `rounding`, `refine`).
* `boundaries`: where a formula changes branch or has a kink, and which
  piecewise branches can overlap.
* `tolerance`: default ULP budgets computed from the tree.

Importing this package imports only the numpy-free parts (parse, print,
classify); the oracle modules load numpy when imported themselves.
"""

from __future__ import annotations

from dmlconform.formula.classify import Category, NotParsed, Parsed, classified, classify
from dmlconform.formula.parser import parse
from dmlconform.formula.printer import expr_text, to_text
from dmlconform.formula.tree import FormulaTree

__all__ = ["Category", "FormulaTree", "NotParsed", "Parsed", "classified", "classify", "expr_text", "parse",
           "to_text"]
