"""The ``DML_OPERATOR_TYPE`` number of each operator, shipped as package data.

DESIGN.md, "The spec": a spec carries the operator type number so a binding
can fill ``DML_OPERATOR_DESC.Type`` without a header.  The numbers are header
facts, not doc content, so `extract` reads them from ``operator_types.json``
beside this module (reproducible from the repository alone); that file is
generated from the ABI facts (``abi-facts.json``, ``enums.DML_OPERATOR_TYPE``)
by running this module::

    python -m dmlconform.spec.operator_types ../shared/directml-abi/abi-facts.json

and a test checks it still matches them.  The same run writes
``attribute_enums.json`` beside the directml backend: the value of every
``DML_*`` enum constant an operator attribute can name (``DML_ROUNDING_MODE_*``,
``DML_TENSOR_DATA_TYPE_*`` ...), which the binding needs to fill enum fields.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dmlconform.atomic import write_atomic

DATA_FILE = "operator_types.json"
#: Where the attribute enum values go, relative to the package root.
ENUM_FILE = ("backends", "directml", "attribute_enums.json")
_PREFIX = "DML_OPERATOR_"
#: C enums that are not operator attributes (the binding's own, in backends/directml/abi.py).
_NOT_ATTRIBUTES = frozenset({"DML_OPERATOR_TYPE", "DML_BINDING_TYPE", "DML_CREATE_DEVICE_FLAGS", "DML_EXECUTION_FLAGS",
                             "DML_FEATURE", "DML_FEATURE_LEVEL", "DML_GRAPH_EDGE_TYPE", "DML_GRAPH_NODE_TYPE",
                             "DML_TENSOR_FLAGS", "DML_TENSOR_TYPE"})


def from_facts(facts: Mapping[str, Any]) -> dict[str, int]:
    """Operator name (``ACTIVATION_SHRINK``) -> type number, from parsed
    abi-facts.json; ``DML_OPERATOR_INVALID`` (0) is left out."""
    enum = facts["enums"]["DML_OPERATOR_TYPE"]
    return {name.removeprefix(_PREFIX): int(value) for name, value in sorted(enum.items())
            if name.startswith(_PREFIX) and int(value) > 0}


def attribute_enums_from_facts(facts: Mapping[str, Any]) -> dict[str, int]:
    """Constant name -> value of every DML enum an operator attribute can have."""
    return {name: int(value) for enum_name, members in sorted(facts["enums"].items())
            if enum_name.startswith("DML_") and enum_name not in _NOT_ATTRIBUTES
            for name, value in sorted(members.items())}


def dumps(types: Mapping[str, int]) -> str:
    """The data file's text: sorted keys, one per line, a trailing newline."""
    return json.dumps(dict(sorted(types.items())), indent=1) + "\n"


@functools.cache
def operator_types() -> Mapping[str, int]:
    """The shipped table (read once; read-only)."""
    text = resources.files("dmlconform.spec").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return MappingProxyType({str(k): int(v) for k, v in json.loads(text).items()})


def operator_type(operator: str) -> int | None:
    """The type number of ``operator``, None for a name the header lacks."""
    return operator_types().get(operator)


def main(argv: list[str]) -> int:
    """Regenerate the data file from an abi-facts.json path."""
    if len(argv) != 1:
        print("usage: python -m dmlconform.spec.operator_types PATH/abi-facts.json", file=sys.stderr)  # noqa: T201 - a maintainer's script
        return 2

    facts = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    root = Path(__file__).resolve().parents[1]
    for target, data in ((Path(__file__).with_name(DATA_FILE), from_facts(facts)),
                         (root.joinpath(*ENUM_FILE), attribute_enums_from_facts(facts))):
        write_atomic(target, dumps(data))
        print(f"wrote {target}")  # noqa: T201 - a maintainer's script
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
