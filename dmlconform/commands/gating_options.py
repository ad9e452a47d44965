"""The ``run`` options of CI gating: ``--baseline``, ``--tolerances``,
``--shard`` and ``--strict``, read and checked into one `Gate` before the
run's workers start (so this module imports nothing heavy: `run_commands`).
DESIGN.md "Who uses it, and for what".
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click

from dmlconform.commands.options import existing_paths, specs_folder
from dmlconform.errors import InputError
from dmlconform.gating.shard import Shard, parse_shard
from dmlconform.results import Baseline, RunResult, ToleranceOverride
from dmlconform.spec.files import spec_files


@dataclass(frozen=True, slots=True)
class Gate:
    """The gating settings of one ``run``, files already read and checked."""

    strict: bool = False
    shard: Shard | None = None
    tolerances: str = ""
    overrides: tuple[ToleranceOverride, ...] = ()
    baseline: Baseline | None = None

    def keep(self, case_id: str) -> bool:
        """Whether the case belongs to this run's shard."""
        return self.shard is None or self.shard.holds(case_id)

    @property
    def override_map(self) -> Mapping[tuple[str, str], ToleranceOverride]:
        """What ``run_cases(overrides=)`` takes."""

        if not self.overrides:
            return {}
        from dmlconform.gating.overrides import by_pair  # noqa: PLC0415 - see `load_gate`

        return by_pair(self.overrides)

    @property
    def run_id_suffix(self) -> str:
        """``-shard3of8`` for a shard, else empty."""
        return f"-shard{self.shard.index}of{self.shard.count}" if self.shard else ""

    def finish(self, run: RunResult) -> RunResult:
        """``run`` with the settings recorded and the baseline applied."""

        run = replace(run, strict=self.strict, shard=str(self.shard or ""), tolerances=self.tolerances,
                      overrides=self.overrides)
        if self.baseline is None:
            return run
        from dmlconform.gating.baseline import apply_baseline  # noqa: PLC0415 - the YAML reader, off the run's start

        return apply_baseline(run, self.baseline)


def _shard(text: str | None) -> Shard | None:
    if text is None:
        return None
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise InputError(f"--shard {exc}") from None


def load_gate(*, specs_dir: str, baseline: str | None, tolerances: str | None, shard: str | None,
              strict: bool) -> Gate:
    """Reads and checks the files before anything runs, so a typo costs seconds, not a suite."""

    # The files' YAML reader is imported where a file is given: a run without starts its workers sooner (issue #31).
    overrides: tuple[ToleranceOverride, ...] = ()
    if tolerances is not None:
        from dmlconform.gating.overrides import read_overrides  # noqa: PLC0415

        operators = {p.stem for p in spec_files(existing_paths((specs_dir,), "spec folder"))}
        overrides = read_overrides(Path(tolerances), operators=operators)
    known = None
    if baseline is not None:
        from dmlconform.gating.baseline import read_baseline  # noqa: PLC0415

        known = read_baseline(Path(baseline))
    return Gate(strict=strict, shard=_shard(shard), tolerances=tolerances or "", overrides=overrides, baseline=known)


def gating_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Adds ``--baseline``, ``--tolerances``, ``--shard`` and ``--strict`` to
    ``command``, which receives them read and checked as one ``gate: Gate``."""
    @functools.wraps(command)
    def wrapper(*args: Any, baseline: str | None, tolerances: str | None, shard: str | None, strict: bool,
                **kwargs: Any) -> Any:
        gate = load_gate(specs_dir=specs_folder(kwargs.get("specs_dir")), baseline=baseline, tolerances=tolerances,
                         shard=shard, strict=strict)
        return command(*args, gate=gate, **kwargs)

    for option in reversed((
        click.option("--baseline", metavar="FILE", help="Known failures (docs/baseline.md): they report as XFAIL; "
                     "a baselined case that passes is XPASS."),
        click.option("--tolerances", metavar="FILE", help="Tolerance overrides per operator x data type "
                     "(docs/baseline.md); shown in every report."),
        click.option("--shard", metavar="K/N", help="Run only shard K of N (split by a stable hash of the case "
                     "id); combine the reports with `dmlconform merge`."),
        click.option("--strict", is_flag=True, help="QUALITY_WARNING and XPASS fail the run too (exit 1)."),
    )):
        wrapper = option(wrapper)
    return wrapper
