"""One spec operator as a torch call (`TorchOp`): what the torch backend's
adapters (`backends.torch.<family>`) describe their operators with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dmlconform.backends.mapping import Attrs

Fn = Callable[..., Any]  # (torch, input views, attributes[, output sizes]) -> result tensor

InPlace = Callable[[Any, Attrs], None]               # (the aliased input view, attributes) -> None

@dataclass(frozen=True, slots=True)
class TorchOp:
    """One spec operator as a torch call: ``fn`` computes a new tensor,
    ``inplace`` (when torch has a ``_`` variant) overwrites the first input's
    view; ``check`` rejects the cases the function does not express."""

    fn: Fn
    inputs: tuple[str, ...] = ("InputTensor",)
    inplace: InPlace | None = None
    check: Callable[[Attrs], None] | None = None
    note: str = ""
    divisor: str | None = None    # integer input whose zeros C++ leaves undefined (NOT_SUPPORTED)
    outputs: int = 1              # outputs ``fn`` gives (more than one: a tuple, in the spec's order)
    sizes: bool = False           # ``fn`` takes the output's sizes too (FOLD: no input gives them)

def torch_module() -> Any:
    import torch  # noqa: PLC0415 - torch is optional (the [torch] extra), seconds to import: only this backend's runs

    return torch
