"""How much of a run the terminal summary shows (`View`): a record of the
command line's options, apart from `terminal` so that reading the options
loads nothing else (the run's workers start right after: `parallel`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SHOWN_FAILURES", "View"]

#: Failing cases shown in full by default: about 15 lines each (heading, a
#: diff table of up to 10 elements, repro), so some 150 lines: two screens,
#: or the end of a CI log, while `coverage.spread_failures` makes them ten
#: different operator x data type x level groups where the run has ten.
SHOWN_FAILURES = 10


@dataclass(frozen=True, slots=True)
class View:
    """How much of a run `render` shows.

    ``worst``: elements per failing case (0 or more); ``failures``: failing
    cases shown in full (0 or more; None: all); ``verbose``: the full
    operator x data type x level table instead of a line per operator;
    ``html``: where report.html is, named where failing cases are left out."""

    worst: int = 10
    failures: int | None = SHOWN_FAILURES
    verbose: bool = False
    html: str = ""

    def __post_init__(self) -> None:
        if self.worst < 0:
            raise ValueError(f"worst={self.worst!r} must be 0 or more")
        if self.failures is not None and self.failures < 0:
            raise ValueError(f"failures={self.failures!r} must be 0 or more")
