"""Known lint findings (``lint --baseline FILE``, docs/lint.md "Baseline").

Like a linter's per-file ignores: a committed list of findings that are
known and accepted (mistakes in the docs themselves, which a spec copies
faithfully), so that ``lint`` passes on them and fails on any new one.  An
entry is keyed by the spec file (relative to the baseline's folder), the
rule code and the finding's message: never by line number, so an edit
elsewhere in the file keeps it matching, while a change to what the finding
says (a different value) makes it a new finding.  An entry whose file was
linted but which matches no finding any more is *fixed*: lint names it at
its line, so that the baseline shrinks.  DESIGN.md "Who uses it" (spec
writers lint; CI gates on new findings only).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from dmlconform.gating.files import Problems, check_version, dump_yaml, read_document
from dmlconform.lint.checks import RULES, Finding

#: The shipped baseline's name beside the shipped specs: ``.yml``, so that a
#: search of the folder for ``*.yaml`` spec files never takes it for a spec.
FILE_NAME = "lint-baseline.yml"

HEADER = ("dmlconform lint baseline: known findings (docs/lint.md, \"Baseline\").\n"
          "Each entry: file (relative to this file's folder), rule code and the finding's message;\n"
          "a finding it names is reported as known and does not fail lint.  Rewrite: lint --write-baseline.")

_KEYS = ("file", "code", "message", "reason")


@dataclass(frozen=True, slots=True)
class Entry:
    """A known finding: where in the baseline file it is written (``line``,
    ``column``), the spec ``file`` relative to the baseline's folder (forward
    slashes), the rule ``code`` and the finding's ``message``."""

    file: str
    code: str
    message: str
    reason: str
    line: int
    column: int

    @property
    def key(self) -> tuple[str, str, str]:
        return self.file, self.code, self.message


@dataclass(frozen=True, slots=True)
class LintBaseline:
    """A baseline file read: its path and entries in file order."""

    path: Path
    entries: tuple[Entry, ...]

    @property
    def root(self) -> Path:
        """The folder entries' files are relative to."""
        return self.path.resolve().parent


@dataclass(frozen=True, slots=True)
class Triage:
    """Findings split by a baseline: ``new`` ones (they fail lint), ``known``
    ones, and the ``fixed`` entries (of a linted file, matching no finding)."""

    new: tuple[Finding, ...]
    known: tuple[Finding, ...]
    fixed: tuple[Entry, ...]


def _entry(problems: Problems, at: tuple[Any, ...], value: Any, where: tuple[int, int]) -> Entry | None:
    if not problems.typed(at, value, dict, "a mapping with file, code and message (and reason)"):
        return None
    problems.keys(at, value, allowed=_KEYS, required=("file", "code", "message"))
    file = problems.text(at + ("file",), value.get("file", "x"), required=True)
    if file and (PurePosixPath(file).is_absolute() or ".." in PurePosixPath(file).parts or "\\" in file):
        problems.add(at + ("file",), f"{file!r} must be a path relative to the baseline's folder, with / "
                                     "and no '..' (e.g. GEMM.yaml, reviewed/REDUCE.yaml)")
    code = problems.name(at + ("code",), value.get("code", RULES[0].code), [r.code for r in RULES], "rule code")
    message = problems.text(at + ("message",), value.get("message", "x"), required=True)
    reason = problems.text(at + ("reason",), value.get("reason", ""), required=False)
    return Entry(file, code or "", message, reason, *where)


def read_baseline(path: Path) -> LintBaseline:
    """The baseline in ``path``; `SpecError` (exit 2) lists every problem at
    file:line:col (an unknown key, a rule code that does not exist, an
    absolute file, an entry written twice)."""
    doc = read_document(path, what="a lint baseline")
    problems = Problems(doc)
    problems.keys((), doc.data, allowed=("version", "findings"))
    check_version(problems, doc.data)
    raw = doc.data.get("findings", [])
    entries: list[Entry] = []
    if raw is not None and problems.typed(("findings",), raw, list, "a list of findings"):
        seen: dict[tuple[str, str, str], int] = {}
        for i, value in enumerate(raw):
            entry = _entry(problems, ("findings", i), value, doc.where(("findings", i)))
            if entry is None:
                continue
            if entry.key in seen:
                problems.add(("findings", i), f"the same finding as the entry at line {seen[entry.key]}: "
                                              "remove one of them")
            seen.setdefault(entry.key, entry.line)
            entries.append(entry)
    problems.raise_if_any()
    return LintBaseline(path, tuple(entries))


def file_key(path: str | Path, root: Path) -> str | None:
    """``path`` as a baseline names it: relative to ``root``, forward
    slashes; None where it does not lie under ``root``."""
    resolved = Path(path).resolve()
    return resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else None


def _in_scope(entry: Entry, root: Path, linted: Sequence[Path]) -> bool:
    """Whether lint read the entry's file (named, or in a folder named): only
    then can a missing finding mean that it was fixed."""
    target = root / entry.file
    return any(target == p or p in target.parents for p in (q.resolve() for q in linted))


def split(findings: Iterable[Finding], baseline: LintBaseline, linted: Sequence[Path]) -> Triage:
    """``findings`` of the files and folders ``linted``, split by ``baseline``."""
    root = baseline.root
    keys = {e.key for e in baseline.entries}
    new: list[Finding] = []
    known: list[Finding] = []
    matched: set[tuple[str, str, str]] = set()
    for finding in findings:
        key = (file_key(finding.path, root) or "", finding.code, finding.message)
        if key in keys:
            known.append(finding)
            matched.add(key)
        else:
            new.append(finding)
    fixed = tuple(e for e in baseline.entries if e.key not in matched and _in_scope(e, root, linted))
    return Triage(tuple(new), tuple(known), fixed)


def outside(findings: Iterable[Finding], root: Path) -> tuple[Finding, ...]:
    """The findings a baseline in ``root`` cannot name (their file lies elsewhere)."""
    return tuple(f for f in findings if file_key(f.path, root) is None)


def dumps(findings: Iterable[Finding], *, root: Path, previous: Iterable[Entry] = (), kept: Iterable[Entry] = ()) -> str:
    """A baseline naming every one of ``findings`` (all under ``root``) and
    the ``kept`` entries (those of files not linted this time), sorted by
    file, code and message; the reason of a ``previous`` entry survives."""
    kept = tuple(kept)
    reasons = {e.key: e.reason for e in (*previous, *kept)}
    keys = {(file_key(f.path, root) or "", f.code, f.message) for f in findings} | {e.key for e in kept}
    rows = []
    for file, code, message in sorted(keys):
        row = {"file": file, "code": code, "message": message}
        if reasons.get((file, code, message)):
            row["reason"] = reasons[(file, code, message)]
        rows.append(row)
    return dump_yaml({"version": 1, "findings": rows}, header=HEADER)
