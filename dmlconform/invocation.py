"""How a run was asked for, as data: what a repro line needs to run one of
its cases again, and the one function that writes that line.

DESIGN.md "Comparison, verdicts and reports": every failure prints a
one-line command that reproduces it.  The line is pasted into a shell, so
every argument goes through `shlex.quote`, case ids above all: an id comes
from a case folder, which anybody may have written (issue 20: an id holding
``'$(cmd)'`` ran ``cmd`` when its repro line was pasted).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Invocation:
    """The options of one ``run`` that decide a case's verdict.  Paths are
    kept as the user wrote them (relative to the folder the run started in,
    where a repro line is pasted); None means the option was not given.
    ``seed`` is None for ``--cases`` (replayed cases do not depend on it)."""

    backend: str
    backend_args: tuple[tuple[str, str], ...] = ()
    level: str = ""
    seed: int | None = None
    specs: str | None = None
    cases: str | None = None
    tolerances: str | None = None
    large: bool = False
    timeout: float | None = None

    def repro(self, case_id: str) -> str:
        """``dmlconform run ...`` that runs case ``case_id`` alone again with
        the options of this run, each argument shell-quoted."""
        args = ["dmlconform", "run", "--backend", self.backend]
        for key, value in self.backend_args:
            args += ["--backend-arg", f"{key}={value}"]
        for option, path in (("--specs", self.specs), ("--cases", self.cases),
                             ("--tolerances", self.tolerances)):
            if path is not None:
                args += [option, path]
        if self.large:
            args.append("--large")
        if self.timeout is not None:
            args += ["--timeout", str(self.timeout)]
        if self.level:
            args += ["--feature-level", self.level]
        args += ["--case", case_id]
        if self.seed is not None:
            args += ["--seed", str(self.seed)]
        return " ".join(shlex.quote(a) for a in args)
