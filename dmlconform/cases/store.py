"""Cases on disk: a manifest plus one ``.npy`` file per tensor buffer.

DESIGN.md, "Cases": cases written to ``cases/NAME/`` can be run by a backend
in another language, and external test vectors can be brought into the same
runner by writing this format.

Format (version 1)
------------------

A case folder holds ``manifest.json`` and the ``.npy`` files it names, nothing
else is read.  ``manifest.json`` is UTF-8 JSON, keys sorted, one case per line,
no NaN or infinity::

    {
     "cases": [ CASE, ... ],            // in generation order
     "format": "dmlconform-cases",
     "specs": {"ACTIVATION_SHRINK": "specs/ACTIVATION_SHRINK.yaml", ...},
     "version": 1
    }

Each CASE::

    {
     "aliases": [["OutputTensor", "InputTensor"]],   // output bound to an input's buffer (in-place)
     "attributes": [["Bias", 0.0], ["Threshold", 0.5]],  // struct order; FLOAT members as the
                                         // float32 value in decimal, exact texts ("1/6") as strings,
                                         // enum constants as their names, booleans, integers
     "dtype": "FLOAT32",                // the case's data type (DML_TENSOR_DATA_TYPE_ suffix)
     "edges": ["+0", "boundary:x>Threshold", "nan", ...],  // edge classes covered
     "expect_supported": true,          // false: outside the level's table (reject or compute)
     "out_of_domain": ["Steepness"],    // optional: attributes outside the doc's range (reject or compute)
     "id": "ACTIVATION_SHRINK/FLOAT32/4d/edges/Bias=0,Threshold=0.5",
     "inputs": [ TENSOR, ... ],         // struct order
     "layout": "packed",                // packed | padded | broadcast | in_place
     "level": "6_4",                    // the feature level whose table the case exercises
     "operator": "ACTIVATION_SHRINK",
     "outputs": [ TENSOR, ... ],
     "seed": 1                          // the suite seed the values came from
    }

Each TENSOR::

    {"dtype": "FLOAT32", "file": "00000.InputTensor.npy", "name": "InputTensor",
     "sizes": [2, 3, 1, 11], "strides": [33, 11, 11, 1]}

Optional keys of a CASE (external vectors, ``dmlconform import onnx``; absent
in generated cases, ignored by `read_cases`)::

     "origin": "onnx 1.23.2 node test test_softsign (Softsign, opset 1)",  // where it came from
     "notes": ["ONNX's expected output agrees with the oracle ..."],      // mapping and findings
     "references": [{"name": "OutputTensor", "file": "00003.reference_OutputTensor.npy"}]
                                        // the source's own expected output (packed), for reference

`read_notes` returns origin and notes by case id; `run --cases` shows them in
each such case's message.

``file`` is a plain name in the folder: a 1-D ``.npy`` array (no pickled
objects; loaded with ``allow_pickle=False``) of the tensor's data type holding
at least ``1 + sum((size - 1) * stride)`` elements.  Element ``[i0, i1, ...]``
of the tensor is buffer element ``sum(i_k * stride_k)``; strides are in
elements, 0 for a broadcast dimension.  Output files hold the initial buffer
(zeros) a backend writes into.  Files are named ``<case index, 5 digits>.<tensor
name>.npy``; a tensor of a tensor array (``InputTensors[1]``, the tensors of
JOIN's array named ``<field>[<index>]``) ``<case index>.InputTensors-1.npy``.  Writing the same cases twice gives byte-identical files; every
file is written atomically, the manifest last, and stale ``.npy`` files of that
naming are removed.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dmlconform import limits
from dmlconform.atomic import write_atomic
from dmlconform.cases.edges import np_dtype
from dmlconform.cases.model import Case, Layout, TensorData, buffer_elements
from dmlconform.errors import LocatedError
from dmlconform.spec.model import DataType, FeatureLevel, split_element
from dmlconform.userfiles import read_bytes, read_json

FORMAT = "dmlconform-cases"
VERSION = 1
MANIFEST = "manifest.json"
_FILE_RE = re.compile(r"^\d{5,}\.[A-Za-z0-9_]+(-\d+)?\.npy$")


def _file_name(index: int, name: str) -> str:
    """The file of case ``index``'s tensor ``name``: ``00003.InputTensor.npy``;
    a tensor of an array (``InputTensors[1]``, `model.element_name`)
    ``00003.InputTensors-1.npy``, a plain file name."""
    head, element = split_element(name)
    return f"{index:05d}.{head}{'' if element is None else f'-{element}'}.npy"


# -- writing ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CaseExtra:
    """The optional keys of an external vector's case: where it came from,
    notes (mapping, findings) and the source's expected outputs by tensor name."""

    origin: str = ""
    notes: tuple[str, ...] = ()
    references: tuple[tuple[str, np.ndarray], ...] = ()


def write_cases(cases: Iterable[Case], folder: str | Path, *,
                spec_paths: Mapping[str, str] | None = None, extras: Mapping[str, CaseExtra] | None = None) -> int:
    """Write ``cases`` to ``folder`` (created if missing); returns how many.
    ``spec_paths`` maps an operator to the spec file its cases came from;
    ``extras`` gives some cases (by id) an origin, notes and references."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    entries, files = [], set()
    for index, case in enumerate(cases):
        entry = _case_entry(case, index)
        for tensor, record in zip(case.inputs + case.outputs, entry["inputs"] + entry["outputs"], strict=True):
            write_atomic(folder / record["file"], _npy(tensor.buffer))
            files.add(record["file"])
        extra = (extras or {}).get(case.id)
        if extra is not None:
            _add_extra(entry, extra, index, folder, files)
        entries.append(entry)
    manifest = {"format": FORMAT, "version": VERSION, "specs": dict(sorted((spec_paths or {}).items())),
                "cases": entries}
    write_atomic(folder / MANIFEST, _manifest_text(manifest))
    for stale in sorted(folder.glob("*.npy")):
        if _FILE_RE.match(stale.name) and stale.name not in files:
            stale.unlink()
    return len(entries)


def _add_extra(entry: dict[str, Any], extra: CaseExtra, index: int, folder: Path, files: set[str]) -> None:
    if extra.origin:
        entry["origin"] = extra.origin
    if extra.notes:
        entry["notes"] = list(extra.notes)
    if extra.references:
        entry["references"] = []
        for name, array in extra.references:
            file = _file_name(index, f"reference_{name}")
            write_atomic(folder / file, _npy(np.asarray(array).reshape(-1)))
            files.add(file)
            entry["references"].append({"name": name, "file": file})


def read_notes(folder: str | Path) -> dict[str, tuple[str, ...]]:
    """Origin and notes of the cases of ``folder`` that have them, by case id
    (empty for generated cases).  The manifest must be readable (`read_cases`
    checks the rest)."""
    data = read_json(Path(folder) / MANIFEST, limits.CASE_MANIFEST, within=Path(folder))
    cases = data.get("cases", []) if isinstance(data, dict) else []
    out: dict[str, tuple[str, ...]] = {}
    for entry in cases if isinstance(cases, list) else []:
        if isinstance(entry, dict) and (entry.get("origin") or entry.get("notes")):
            text = tuple(str(n) for n in entry.get("notes", []) if isinstance(n, str))
            out[str(entry.get("id"))] = ((str(entry["origin"]),) if entry.get("origin") else ()) + text
    return out


def _manifest_text(manifest: dict[str, Any]) -> str:
    """Sorted-key JSON with one case per line (diffs of case folders stay readable)."""
    def dump(v: Any) -> str:
        return json.dumps(v, sort_keys=True, allow_nan=False, ensure_ascii=False)

    lines = []
    for key in sorted(manifest):
        if key == "cases":
            body = ",\n".join(f"  {dump(c)}" for c in manifest[key])
            lines.append(f' "cases": [\n{body}\n ]' if body else ' "cases": []')
        else:
            lines.append(f" {dump(key)}: {dump(manifest[key])}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _case_entry(case: Case, index: int) -> dict[str, Any]:
    def tensor(t: TensorData) -> dict[str, Any]:
        return {"name": t.name, "dtype": t.dtype.name, "sizes": list(t.sizes), "strides": list(t.strides),
                "file": _file_name(index, t.name)}

    return {"id": case.id, "operator": case.operator, "level": case.level.short, "dtype": case.dtype.name,
            "layout": case.layout.value, "attributes": [[n, v] for n, v in case.attributes],
            "aliases": [list(a) for a in case.aliases], "expect_supported": case.expect_supported,
            "edges": list(case.edges), "seed": case.seed,
            "inputs": [tensor(t) for t in case.inputs], "outputs": [tensor(t) for t in case.outputs],
            **({"out_of_domain": list(case.out_of_domain)} if case.out_of_domain else {})}


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, np.ascontiguousarray(array), allow_pickle=False)
    return out.getvalue()


# -- reading ---------------------------------------------------------------------------
def read_cases(folder: str | Path) -> list[Case]:
    """The cases of ``folder``, in manifest order.  A missing, malformed or
    inconsistent file raises `LocatedError` naming the file (and for the
    manifest the line and column, or the case and key)."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not (path.exists() or path.is_symlink()):
        raise LocatedError("no case manifest here; write one with `dmlconform gen`", path=path)
    data = read_json(path, limits.CASE_MANIFEST, within=folder)  # regular, bounded, valid JSON, not too deep
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise LocatedError(f'not a case manifest: expected "format": "{FORMAT}"', path=path)
    if data.get("version") != VERSION:
        raise LocatedError(f"version={data.get('version')!r} is not supported (this dmlconform reads {VERSION})",
                           path=path)
    cases = data.get("cases")
    if not isinstance(cases, list):
        raise LocatedError('"cases" must be a list', path=path)
    return [_case(folder, path, i, entry) for i, entry in enumerate(cases)]


def _case(folder: Path, path: Path, index: int, entry: Any) -> Case:
    where = f"cases[{index}]"
    try:
        if not isinstance(entry, dict):
            raise TypeError("must be an object")
        attributes = tuple((str(n), _scalar(v)) for n, v in entry["attributes"])
        return Case(
            id=_str(entry["id"]), operator=_str(entry["operator"]), level=FeatureLevel.parse(entry["level"]),
            dtype=DataType.parse(entry["dtype"]),
            inputs=tuple(_tensor(folder, t) for t in entry["inputs"]),
            outputs=tuple(_tensor(folder, t) for t in entry["outputs"]),
            attributes=attributes, layout=Layout(entry["layout"]),
            aliases=tuple((_str(o), _str(i)) for o, i in entry["aliases"]),
            expect_supported=_bool(entry["expect_supported"]), edges=tuple(_str(e) for e in entry["edges"]),
            seed=_int(entry["seed"]), out_of_domain=_names(entry.get("out_of_domain", [])))
    except LocatedError:
        raise
    except KeyError as exc:
        raise LocatedError(f"{where}: missing key {exc.args[0]!r}", path=path) from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise LocatedError(f"{where} ({entry.get('id', '?') if isinstance(entry, dict) else '?'}): {exc}",
                           path=path) from None


def _tensor(folder: Path, record: Any) -> TensorData:
    name, file = _str(record["name"]), _str(record["file"])
    if not _FILE_RE.match(file):
        raise ValueError(f"tensor {name}: file={file!r} is not a plain <index>.<name>.npy name")
    dtype = DataType.parse(record["dtype"])
    sizes = tuple(_int(s) for s in record["sizes"])
    strides = tuple(_int(s) for s in record["strides"])
    if len(sizes) != len(strides) or any(s < 0 for s in sizes + strides):
        raise ValueError(f"tensor {name}: sizes={list(sizes)} and strides={list(strides)} must be equally long "
                         "and not negative")
    buffer = read_npy(folder / file, np_dtype(dtype), buffer_elements(sizes, strides))
    return TensorData(name, dtype, sizes, strides, buffer)


#: Readers of the .npy header versions `np.save` writes.
_NPY_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def read_npy(path: Path, dtype: np.dtype, need: int) -> np.ndarray:
    """The 1-D array of ``dtype`` in the ``.npy`` file ``path``, holding at
    least ``need`` elements, read-only.  The header is read and checked first
    (its version, no object arrays, the data type, one dimension, and a shape
    the file's length really holds), so that a header claiming 10^12 elements
    is refused before anything is allocated."""
    raw = read_bytes(path, limits.TENSOR_FILE, within=path.parent)
    stream = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(stream)
        if version not in _NPY_HEADERS:
            raise ValueError(f"format version {version[0]}.{version[1]} (this dmlconform reads 1.0 and 2.0)")
        shape, _, file_dtype = _NPY_HEADERS[version](stream)
    except (ValueError, OSError, SyntaxError, TypeError, tokenize.TokenError) as exc:
        # numpy parses the header's dict with Python's tokenizer: a damaged one raises any of these
        raise LocatedError(f"not a plain .npy array ({exc}); write it with numpy.save", path=path) from None
    if file_dtype.hasobject or file_dtype != dtype or len(shape) != 1:
        raise LocatedError(f"expected a 1-D array of {dtype}, found shape={shape} dtype={file_dtype}; "
                           "object arrays are refused", path=path)
    have = (len(raw) - stream.tell()) // dtype.itemsize
    if have < shape[0]:
        raise LocatedError(f"the header claims {shape[0]} elements of {dtype} but the file holds {have}: "
                           "it is truncated or not what it says", path=path)
    if shape[0] < need:
        raise LocatedError(f"holds {shape[0]} elements but sizes and strides address {need}", path=path)
    return np.frombuffer(raw, dtype=dtype, count=shape[0], offset=stream.tell())  # read-only, as bytes are


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"expected a string, found {v!r}")
    return v


def _names(v: Any) -> tuple[str, ...]:
    """A list of strings (``out_of_domain``; absent in folders written before it)."""
    if not isinstance(v, list):
        raise TypeError(f"out_of_domain: expected a list of attribute names, found {v!r}")
    return tuple(_str(n) for n in v)


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"expected an integer, found {v!r}")
    return v


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise TypeError(f"expected true or false, found {v!r}")
    return v


def _scalar(v: Any) -> float | int | bool | str:
    if not isinstance(v, (float, int, bool, str)):
        raise TypeError(f"attribute value {v!r} must be a number, boolean or string")
    return v



# -- where each case is in the manifest ------------------------------------------------
def case_lines(folder: str | Path) -> tuple[int, ...]:
    """The manifest line (1-based) on which each case of ``folder`` starts,
    in manifest order, so that a problem of case N can name its line
    (`case_folders`).  Call it after `read_cases` accepted the folder; an
    unreadable manifest gives ``()`` (no line known)."""
    try:
        text = (Path(folder) / MANIFEST).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ()
    return manifest_case_lines(text)


def case_columns(folder: str | Path) -> tuple[int, ...]:
    """The manifest column (1-based) at which each case of ``folder``
    starts (its ``{``), beside `case_lines`, so that an error names
    file:line:column; ``()`` where unknown."""
    try:
        text = (Path(folder) / MANIFEST).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ()
    return tuple(offset - text.rfind("\n", 0, offset) for offset in _case_offsets(text))


def manifest_case_lines(text: str) -> tuple[int, ...]:
    """`case_lines` of a manifest's text: one case per line as `write_cases`
    writes it, or any other layout of valid JSON (a hand-written, indented
    manifest)."""
    return _line_numbers(text, _case_offsets(text))


def _case_offsets(text: str) -> list[int]:
    """Where each case of a manifest's text starts.  The decoder itself
    skips each value, so this costs about one more parse; text that is not
    a JSON object gives none."""
    decoder = json.JSONDecoder()
    starts: list[int] = []
    try:
        at = _skip(text, 0)
        if text[at] != "{":
            return []
        at = _skip(text, at + 1)
        while text[at] == '"':
            # json's own string scanner (the C one where built); typeshed leaves it undeclared, hence the ignore
            key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            at = _skip(text, _skip(text, at) + 1)  # past the colon
            if key == "cases" and text[at] == "[":
                starts, at = _element_starts(text, at, decoder)  # a repeated key: the last counts, as in json
            else:
                at = decoder.raw_decode(text, at)[1]
            at = _skip(text, at)
            at = _skip(text, at + 1) if text[at] == "," else at
    except (IndexError, ValueError):
        return []
    return starts


def _element_starts(text: str, at: int, decoder: json.JSONDecoder) -> tuple[list[int], int]:
    """Where each element of the array that opens at ``at`` starts, and where the array ends."""
    starts: list[int] = []
    at = _skip(text, at + 1)
    while text[at] != "]":
        starts.append(at)
        at = _skip(text, decoder.raw_decode(text, at)[1])
        at = _skip(text, at + 1) if text[at] == "," else at
    return starts, at + 1


def _skip(text: str, at: int) -> int:
    """The first offset at or after ``at`` that is not JSON whitespace."""
    while at < len(text) and text[at] in " \t\n\r":
        at += 1
    return at


def _line_numbers(text: str, offsets: list[int]) -> tuple[int, ...]:
    """The 1-based line of each of ``offsets`` (ascending)."""
    lines, line, last = [], 1, 0
    for offset in offsets:
        line += text.count("\n", last, offset)
        last = offset
        lines.append(line)
    return tuple(lines)
