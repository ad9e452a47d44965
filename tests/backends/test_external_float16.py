"""The external backend's declaration of FLOAT16 accumulation in its hello
reply (docs/external-backend.md): read into `BackendInfo`, refused with
the value named where it is neither a boolean nor a list of names."""

from __future__ import annotations

import pytest

from tests.backends.test_external import fake


@pytest.mark.parametrize(("declared", "read"), [
    ("[\"GEMM\", \"REDUCE\"]", frozenset({"GEMM", "REDUCE"})),
    ("true", True),
    ("false", False),
    ("[]", frozenset()),
])
def test_the_hello_declares_float16_accumulation(declared: str, read: bool | frozenset[str]) -> None:
    backend = fake("float16", declared)
    try:
        info = backend.info()
        assert info.available, info.reason
        assert info.float16_accumulation == read
    finally:
        backend.close()


def test_a_program_that_declares_nothing_accumulates_in_float32() -> None:
    backend = fake("ok")
    try:
        assert backend.info().float16_accumulation is False
    finally:
        backend.close()


@pytest.mark.parametrize("declared", ["\"GEMM\"", "[1]", "{\"GEMM\": true}", "1"])
def test_a_bad_declaration_makes_the_backend_unavailable_naming_it(declared: str) -> None:
    backend = fake("float16", declared)
    try:
        info = backend.info()
        assert not info.available
        assert "bad hello reply: float16_accumulation=" in str(info.reason)
        assert "must be true, false or a list of operator names" in str(info.reason)
    finally:
        backend.close()
