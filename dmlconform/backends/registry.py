"""Finding and loading backends through Python entry points.

DESIGN.md, "Backends": a backend ships as any package that declares an entry
point in the group ``dmlconform.backends`` (``name = "module:factory"``).
Found and loaded backends are separate types, as in flake8's plugin finder:
`BackendEntry` is what the metadata says (nothing imported), `LoadedBackend`
what importing and calling it gave.  A failed load becomes a
`BackendLoadError` naming ``dist[name]`` and the cause; the loaded object is
checked against the `Backend` protocol before anyone calls it (as pluggy
verifies a hook when it registers).  A backend that loads but says
``available=False`` is kept: it reports why rather than raising.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from dmlconform.backends.base import Backend, BackendInfo, unknown_options
from dmlconform.errors import BackendLoadError, ExitCode, InputError

GROUP = "dmlconform.backends"
_METHODS = ("info", "supports", "run")


@dataclass(frozen=True, slots=True)
class BackendEntry:
    """A backend found in the installed metadata; nothing imported yet."""

    name: str
    value: str                 # "module:attribute"
    dist: str                  # distribution name ("?" when unknown)
    dist_version: str

    @property
    def label(self) -> str:
        """``dist[name]``: how messages name a plugin."""
        return f"{self.dist}[{self.name}]"

    def entry_point(self) -> metadata.EntryPoint:
        return metadata.EntryPoint(name=self.name, value=self.value, group=GROUP)


@dataclass(frozen=True, slots=True)
class LoadedBackend:
    """A backend imported, built with its options, checked, and described."""

    entry: BackendEntry
    backend: Backend
    info: BackendInfo


def available_backends(*, path: Sequence[str] | None = None) -> list[BackendEntry]:
    """Every backend entry point, sorted by name then distribution.

    ``path`` (a list of folders like ``sys.path``) looks there instead of the
    running interpreter's path: the tests use it to install a package by
    dropping a ``*.dist-info`` folder in a temporary directory."""
    dists: Iterable[metadata.Distribution] = (
        metadata.distributions() if path is None else metadata.distributions(path=list(path)))
    found: dict[tuple[str, str], BackendEntry] = {}
    for dist in dists:
        points = [ep for ep in dist.entry_points if ep.group == GROUP]
        if not points:
            continue  # its METADATA unread: parsing every installed package's cost a run 40 ms per process
        dist_name = dist.metadata["Name"] or "?"
        for ep in points:
            found.setdefault((ep.name, dist_name), BackendEntry(ep.name, ep.value, dist_name, dist.version or "?"))
    return sorted(found.values(), key=lambda e: (e.name, e.dist))


def find_backend(name: str, entries: Sequence[BackendEntry]) -> BackendEntry:
    """The entry called ``name``; an unknown name lists the installed ones
    and the nearest match."""
    matches = [e for e in entries if e.name == name]
    if len(matches) == 1:
        return matches[0]
    if matches:
        both = ", ".join(e.label for e in matches)
        raise BackendLoadError(f"backend {name!r} is declared by several packages ({both}); uninstall all but one")
    names = sorted({e.name for e in entries})
    near = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    listed = ", ".join(names) if names else "none"
    raise BackendLoadError(f"no backend named {name!r} (installed: {listed}){hint}")


def load_backend(name: str, options: Mapping[str, str] | None = None, *,
                 path: Sequence[str] | None = None) -> Backend:
    """Import, build (with ``options`` as keyword arguments) and check the
    backend called ``name``."""
    return load_entry(find_backend(name, available_backends(path=path)), options).backend


def load_entry(entry: BackendEntry, options: Mapping[str, str] | None = None) -> LoadedBackend:
    """`BackendLoadError` naming ``dist[name]`` for any failure on the way."""
    try:
        obj = entry.entry_point().load()
    except Exception as exc:
        raise BackendLoadError(f"{entry.label}: cannot import {entry.value}: {type(exc).__name__}: {exc}") from exc
    backend = _build(entry, obj, dict(options or {}))
    missing = [m for m in _METHODS if not callable(getattr(backend, m, None))]
    if missing or not isinstance(backend, Backend):
        raise BackendLoadError(
            f"{entry.label}: {entry.value} gave a {type(backend).__name__}, which is not a dmlconform Backend "
            f"(missing or not callable: {', '.join(missing) or 'none'}); it must define info(), supports(spec, case) "
            "and run(spec, case, buffers)")
    try:
        info = backend.info()
    except Exception as exc:
        raise BackendLoadError(f"{entry.label}: info() raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(info, BackendInfo):
        raise BackendLoadError(f"{entry.label}: info() returned a {type(info).__name__}; it must return a BackendInfo")
    return LoadedBackend(entry, backend, info)


def _build(entry: BackendEntry, obj: Any, options: dict[str, str]) -> Any:
    """Call a factory (a class or a function) with the options; an object
    that already is a backend is used as it is, and then takes no options.
    Options the factory does not take, or that it refuses (`InputError`),
    are the command line's fault: a usage error (exit 2), not an
    unavailable backend (exit 3)."""
    if not isinstance(obj, type) and isinstance(obj, Backend):
        if options:
            raise _usage(BackendLoadError(f"{entry.label}: {unknown_options(options, ())}"))
        return obj
    if not callable(obj):
        raise BackendLoadError(f"{entry.label}: {entry.value} is a {type(obj).__name__}, neither a backend nor "
                               "a factory of one")
    known = _keywords(obj)
    if known is not None and not set(options) <= set(known):
        raise _usage(BackendLoadError(f"{entry.label}: {unknown_options(set(options) - set(known), known)}"))
    try:
        return obj(**options)
    except InputError as exc:  # the user's options are wrong (a missing cmd=, an unknown key)
        raise _usage(BackendLoadError(f"{entry.label}: {exc}")) from exc
    except Exception as exc:
        given = ", ".join(f"{k}={v}" for k, v in sorted(options.items())) or "no options"
        raise BackendLoadError(f"{entry.label}: building it with {given} failed: {type(exc).__name__}: {exc}") from exc


def _keywords(factory: Any) -> tuple[str, ...] | None:
    """The keyword arguments ``factory`` takes, in order; None where it
    takes any (``**options``: it checks them itself) or has no signature."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def _usage(error: BackendLoadError) -> BackendLoadError:
    """``error`` as a usage error (exit 2): the backend is there, the command line is wrong."""
    error.exit_code = ExitCode.USAGE
    return error
