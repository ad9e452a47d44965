"""The generated half of the libd3d12.so bridge: System V proxies over vkd3d.

Issue #25.  libdirectml.so calls D3D12 methods with the System V convention;
vkd3d's methods use ms_abi.  `generate` reads the C vtables that widl wrote
into vkd3d's own headers (``vkd3d_d3d12.h`` and ``vkd3d_d3dcommon.h`` of the
vkd3d the stack unpacked, at build time: nothing generated is committed) and
writes, per method of every D3D12 interface (plus ID3D10Blob and IUnknown), a
plain C function that forwards to vkd3d's method, translating what crosses
the boundary:

- an interface pointer going in is unwrapped (proxy -> vkd3d object), arrays
  of them too (``ID3D12CommandList *const *lists`` with its count);
- an interface coming out (``REFIID riid, void **out`` or ``IFoo **out``) is
  wrapped in its proxy;
- structs that embed interface pointers (barriers, pipeline-state descs and
  streams, texture copy locations) are copied with the pointers unwrapped;
- a method vkd3d declares with an explicit aggregate return
  (``T *(*M)(This, ..., T *__ret)``) returns ``T`` by value, as the System V
  C++ ABI of libdirectml.so expects;
- ``Release`` forgets the proxy when the count reaches zero; ``SetName`` is
  answered S_OK without forwarding (its WCHAR is 4 bytes in libdirectml.so,
  2 in vkd3d).

The runtime those functions call (``bridge_runtime.c``) is hand-written; the
build concatenates the two.  Pure functions over text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

_VTABLE = re.compile(r"typedef struct (\w+)Vtbl \{(.*?)\} \1Vtbl;", re.S)
_METHOD = re.compile(r"([^;{}]*?)\(STDMETHODCALLTYPE \*(\w+)\)\((.*?)\);", re.S)
_SECTION = re.compile(r"/\*\*\* (\w+) methods \*\*\*/")
#: Structs passed by pointer that hold interface pointers: the fields to unwrap.
_EMBEDDED = {
    "D3D12_COMPUTE_PIPELINE_STATE_DESC": "pRootSignature",
    "D3D12_GRAPHICS_PIPELINE_STATE_DESC": "pRootSignature",
    "D3D12_TEXTURE_COPY_LOCATION": "pResource",
}

#: Methods whose failure means vkd3d refused a pipeline state (counted by the runtime).
_PIPELINE_CREATORS = ("CreateComputePipelineState", "CreateGraphicsPipelineState", "CreatePipelineState")
#: What libd3d12.so exports (libdirectml.so needs the serializer at version VER_1; the backend creates the device).
EXPORTS = ("D3D12CreateDevice", "D3D12SerializeRootSignature", "D3D12SerializeVersionedRootSignature",
           "bridge_pipeline_failures")


class BridgeError(Exception):
    """The header does not have the shape the generator reads."""


@dataclass(frozen=True, slots=True)
class Param:
    ctype: str
    name: str


@dataclass(frozen=True, slots=True)
class Method:
    ret: str
    name: str
    params: tuple[Param, ...]   # without ``This``


@dataclass(frozen=True, slots=True)
class Interface:
    name: str
    bases: tuple[str, ...]       # most basic first, itself last
    methods: tuple[Method, ...]


@dataclass(frozen=True, slots=True)
class Bridge:
    """The generated C source and what it covers."""

    source: str
    interfaces: int
    methods: int


def _param(text: str) -> Param:
    text = " ".join(re.sub(r"/\*.*?\*/", "", text).split())
    text = re.sub(r"^(.*?)(\w+)\[\d*\]$", r"\1*\2", text)  # 'const FLOAT x[4]' -> 'const FLOAT *x'
    m = re.fullmatch(r"(.*?)\s*(\w+)", text)
    if m is None or not m.group(1):
        raise BridgeError(f"cannot read the parameter {text!r}")
    return Param(" ".join(m.group(1).replace("*", " * ").split()).replace("* *", "**"), m.group(2))


def parse(headers: Sequence[str]) -> dict[str, Interface]:
    """Every ``IFooVtbl`` of the headers, first definition wins."""
    found: dict[str, Interface] = {}
    for text in headers:
        for m in _VTABLE.finditer(text):
            name, body = m.group(1), m.group(2)
            if name in found:
                continue
            methods = []
            for mm in _METHOD.finditer(body):
                params = [_param(p) for p in mm.group(3).split(",")]
                ret = " ".join(re.sub(r"/\*.*?\*/|\b(BEGIN|END)_INTERFACE\b", "", mm.group(1)).split())
                methods.append(Method(ret, mm.group(2), tuple(params[1:])))
            bases = tuple(_SECTION.findall(body))
            found[name] = Interface(name, bases if bases[-1:] == (name,) else (*bases, name), tuple(methods))
    return found


def kept(interfaces: Mapping[str, Interface]) -> list[Interface]:
    """The interfaces DirectML may meet: IUnknown, ID3D10Blob, every ID3D12*."""
    names = [n for n in interfaces if n in ("IUnknown", "ID3D10Blob") or n.startswith("ID3D12")]
    for needed in ("IUnknown", "ID3D10Blob", "ID3D12Device", "ID3D12Resource"):
        if needed not in names:
            raise BridgeError(f"no {needed}Vtbl in the headers")
    return [interfaces[n] for n in sorted(names, key=lambda n: (n != "IUnknown", n))]


# ------------------------------------------------------------------ one method
@dataclass(frozen=True, slots=True)
class _Call:
    """What a proxy does around the forwarded call."""

    args: tuple[str, ...]
    before: tuple[str, ...]
    after: tuple[str, ...]       # may refer to ``ok`` (the call succeeded)


def _count(params: Sequence[Param], at: int) -> str:
    """The count parameter of the array at ``at``: the nearest UINT named *count* or *num*."""
    counts = [(abs(i - at), p.name) for i, p in enumerate(params) if p.ctype == "UINT" and re.search(r"count|num", p.name, re.I)]
    if not counts:
        raise BridgeError(f"no count parameter for {params[at].name}")
    return min(counts)[1]


def _translate(params: Sequence[Param], names: frozenset[str]) -> _Call:
    args: list[str] = []
    before: list[str] = []
    after: list[str] = []
    riid: str | None = None
    for i, p in enumerate(params):
        t, n = p.ctype, p.name
        base = t.removeprefix("const ").strip()
        single = re.fullmatch(r"(\w+) \*", base)
        array = re.fullmatch(r"(\w+) \* const \*", base)
        out = re.fullmatch(r"(\w+) \*\*", t)
        if t == "REFIID":
            riid = n
            args.append(n)
        elif single and single.group(1) in names:
            args.append(f"({t})bridge_unwrap({n})")
        elif array and array.group(1) in names:
            count = _count(params, i)
            before.append(f"void *tmp_{n}[({count}) ? ({count}) : 1];")
            before.append(f"for (UINT k = 0; k < ({count}); k++) tmp_{n}[k] = bridge_unwrap({n}[k]);")
            args.append(f"({t})tmp_{n}")
        elif t == "void **" and riid is not None:
            args.append(n)
            after.append(f"if (ok && {n} && *{n}) {{ *{n} = bridge_wrap(*{n}, {riid}); if (!*{n}) failed = 1; }}")
        elif out and out.group(1) in names:
            iid = "ID3D10Blob" if out.group(1) == "ID3DBlob" else out.group(1)
            args.append(n)
            after.append(f"if (ok && {n} && *{n}) {{ *{n} = bridge_wrap(*{n}, &IID_{iid}); if (!*{n}) failed = 1; }}")
        else:
            args.append(_struct_arg(p, params, i, before, after))
    return _Call(tuple(args), tuple(before), tuple(after))


def _struct_arg(p: Param, params: Sequence[Param], i: int, before: list[str], after: list[str]) -> str:
    """The argument for a parameter that is no interface: structs embedding
    interfaces are copied and unwrapped, anything else passes as it is."""
    t, n = p.ctype, p.name
    base = t.removeprefix("const ").strip()
    if base == "D3D12_RESOURCE_BARRIER *":
        count = _count(params, i)
        before.append(f"D3D12_RESOURCE_BARRIER tmp_{n}[({count}) ? ({count}) : 1];")
        before.append(f"if ({n}) bridge_unwrap_barriers(tmp_{n}, {n}, {count});")
        return f"{n} ? tmp_{n} : NULL"
    struct = base.removesuffix(" *")
    if base.endswith(" *") and struct in _EMBEDDED:
        field = _EMBEDDED[struct]
        before.append(f"{struct} tmp_{n};")
        before.append(f"if ({n}) {{ tmp_{n} = *{n}; tmp_{n}.{field} = bridge_unwrap(tmp_{n}.{field}); }}")
        return f"{n} ? &tmp_{n} : NULL"
    if base == "D3D12_PIPELINE_STATE_STREAM_DESC *":
        before.append(f"D3D12_PIPELINE_STATE_STREAM_DESC tmp_{n}; void *stream_{n} = NULL;")
        before.append(f"if ({n}) {{ tmp_{n} = *{n}; stream_{n} = bridge_unwrap_stream(&tmp_{n}); }}")
        after.append(f"free(stream_{n});")
        return f"{n} ? &tmp_{n} : NULL"
    return n


def _proxy(iface: Interface, method: Method, names: frozenset[str]) -> str:
    """The C function of one proxy method."""
    params = list(method.params)
    aggregate = bool(params) and params[-1].name == "__ret"
    if aggregate:
        params = params[:-1]
    ret = method.ret.rstrip("*").strip() if aggregate else method.ret
    call = _translate(params, names)
    decl = ", ".join(["struct bridge_proxy *This", *(f"{p.ctype} {p.name}" for p in params)])
    forward = f"r->lpVtbl->{method.name}(" + ", ".join(["r", *call.args])
    lines = [f"static {ret} px_{iface.name}_{method.name}({decl}) {{",
             f"    {iface.name} *r = ({iface.name} *)This->real;",
             f'    bridge_trace("{iface.name}::{method.name}");',
             *("    " + b for b in call.before)]
    lines += _body(method, ret, forward, call, aggregate)
    return "\n".join([*lines, "}"])


def _body(method: Method, ret: str, forward: str, call: _Call, aggregate: bool) -> list[str]:
    if method.name == "SetName":
        return ["    (void)r; (void)name;", "    return S_OK;  /* 4-byte WCHAR here, 2-byte in vkd3d */"]
    if aggregate:
        return [f"    {ret} ret_;", f"    {forward}, &ret_);", "    return ret_;"]
    if method.name == "Release":
        return [f"    ULONG ret_ = {forward});", "    if (!ret_) bridge_forget(This);", "    return ret_;"]
    if method.name in _PIPELINE_CREATORS:
        return [f"    HRESULT ret_ = {forward});", "    bridge_pipeline_result(ret_);",
                "    int ok = SUCCEEDED(ret_), failed = 0;", *("    " + a for a in call.after),
                "    if (failed) ret_ = E_NOINTERFACE;", "    return ret_;"]
    if ret == "void":
        return [f"    {forward});", "    int ok = 1, failed = 0;", *("    " + a for a in call.after),
                "    (void)ok; (void)failed;"]
    ok = "SUCCEEDED(ret_)" if ret == "HRESULT" else "1"
    fail = "    if (failed) ret_ = E_NOINTERFACE;" if ret == "HRESULT" else "    (void)failed;"
    return [f"    {ret} ret_ = {forward});", f"    int ok = {ok}, failed = 0;", *("    " + a for a in call.after),
            "    (void)ok;", fail, "    return ret_;"]


# ------------------------------------------------------------------ the whole file
def _lines_of_descent(ifaces: Sequence[Interface]) -> Iterator[tuple[int, int, int]]:
    """Per interface: its index, the index of the deepest interface of its
    single line of descent (itself where its descendants branch), and the
    bit mask of its ancestors (itself included)."""
    index = {x.name: i for i, x in enumerate(ifaces)}
    for i, x in enumerate(ifaces):
        below = [y for y in ifaces if x.name in y.bases]
        line = all(a.name in b.bases or b.name in a.bases for a in below for b in below)
        deepest = max(below, key=lambda y: len(y.bases)) if line else x
        mask = sum(1 << index[b] for b in x.bases if b in index)
        yield i, index[deepest.name], mask


def generate(headers: Sequence[str]) -> Bridge:
    """The proxies and the interface table, from the headers' text."""
    ifaces = kept(parse(headers))
    if len(ifaces) > 64:
        raise BridgeError(f"{len(ifaces)} interfaces: the ancestor masks hold 64")
    names = frozenset(x.name for x in ifaces) | {"ID3DBlob"}
    out = ["/* Generated at build time by dmlconform/backends/directml/bridge_gen.py from vkd3d's headers. */"]
    for x in ifaces:
        out += [_proxy(x, m, names) for m in x.methods]
        out.append(f"static void *const vt_{x.name}[] = {{\n    "
                   + ",\n    ".join(f"(void *)px_{x.name}_{m.name}" for m in x.methods) + "\n};")
    rows = [f'    {{"{x.name}", &IID_{x.name}, vt_{x.name}, {i}, {deepest}, {mask:#x}ull}},'
            for x, (i, deepest, mask) in zip(ifaces, _lines_of_descent(ifaces))]
    out.append("const struct bridge_iface bridge_ifaces[] = {\n" + "\n".join(rows) + "\n    {NULL, NULL, NULL, 0, 0, 0}\n};")
    return Bridge("\n\n".join(out) + "\n", len(ifaces), sum(len(x.methods) for x in ifaces))


def version_script() -> str:
    """The linker version script: the exports at VER_1 (what libdirectml.so binds to), nothing else."""
    return "VER_1 {\n    global: " + "; ".join(EXPORTS) + ";\n    local: *;\n};\n"
