"""Tier (a): every struct, enum value, IID, constant and vtable slot the binding uses, against abi-facts.json."""

from __future__ import annotations

import ctypes as C

import pytest

from dmlconform.backends.directml import abi
from dmlconform.backends.directml.descs import desc_struct


def _layout(struct: type) -> dict[str, tuple[int, int]]:
    out = {}
    for name, *_ in struct._fields_:
        if name in getattr(struct, "_anonymous_", ()):
            inner = dict(struct._fields_)[name]
            base = getattr(struct, name).offset
            out.update({k: (base + off, size) for k, (off, size) in _layout(inner).items()})
        else:
            d = getattr(struct, name)
            out[name] = (d.offset, d.size)
    return out


@pytest.mark.parametrize("struct", abi.STRUCTS, ids=abi.c_name)
def test_struct_layout(facts, struct) -> None:  # type: ignore[no-untyped-def]
    fact = facts["structs"][abi.c_name(struct)]
    assert (C.sizeof(struct), C.alignment(struct)) == (fact["size"], fact["align"]), abi.c_name(struct)
    expected = {k: (v["offset"], v["size"]) for k, v in fact["members"].items()}
    assert _layout(struct) == expected


def test_every_operator_desc_layout(facts, all_specs) -> None:  # type: ignore[no-untyped-def]
    checked = 0
    for spec in all_specs:
        fact = facts["structs"][spec.struct]
        struct = desc_struct(spec)
        expected = {k: (v["offset"], v["size"]) for k, v in fact["members"].items()}
        assert (_layout(struct), C.sizeof(struct)) == (expected, fact["size"]), spec.struct
        checked += 1
    assert checked == len(all_specs) == 176


@pytest.mark.parametrize("enum", abi.ENUMS, ids=lambda e: e._c_enum)
def test_enum_values(facts, enum) -> None:  # type: ignore[no-untyped-def]
    values = facts["enums"][enum._c_enum]
    for member in enum:
        assert values[enum.c_name(member)] == int(member), enum.c_name(member)


def test_iids(facts) -> None:  # type: ignore[no-untyped-def]
    for name, text in abi.IIDS.items():
        if name in facts["iids"]:
            assert facts["iids"][name] == text, name
    assert abi.IIDS["ID3D12Device5"] == "8b4f173b-2fea-4b80-8f58-4307191ab95d"  # com.md table, not in the json
    assert bytes(abi.Guid.parse(abi.IIDS["IDMLDevice"]))[:4] == (0x6DBD6437).to_bytes(4, "little")
    assert str(abi.iid("IDMLOperator")) == abi.IIDS["IDMLOperator"]


@pytest.mark.parametrize("slots", abi.VTABLES, ids=lambda s: s._interface)
def test_vtable_slots(facts, slots) -> None:  # type: ignore[no-untyped-def]
    table = facts["vtables"]["IDMLObject" if slots._interface == "IUnknown" else slots._interface]
    for method in slots:
        assert table[int(method)] == method.name, f"{slots._interface}::{method.name}"


def test_vtable_lengths_and_constants(facts) -> None:  # type: ignore[no-untyped-def]
    for name, length in abi.VTABLE_LENGTHS.items():
        assert len(facts["vtables"][name]) == length
    for name, value in abi.CONSTANTS.items():
        assert facts["constants"][name] == value, name


def test_hresult_text() -> None:
    assert abi.hresult_text(abi.E_INVALIDARG) == "E_INVALIDARG (0x80070057)"
    assert abi.hresult_text(abi.E_NOINTERFACE) == "E_NOINTERFACE (0x80004002)"
    assert abi.hresult_text(-1) == "0xFFFFFFFF"
