"""The options that say how much of a run the terminal shows, shared by
``run`` and ``merge`` (both print the same summary): ``--worst``,
``--show-failures`` and ``--verbose``, read into one `report.view.View`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from dmlconform.report.view import SHOWN_FAILURES, View


def view_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Adds ``--worst``, ``--show-failures`` and ``--verbose`` to ``command``,
    which receives them as one ``view: View`` (without report.html's path:
    the command knows it).  ``--verbose`` shows every failing case unless
    ``--show-failures`` says how many."""
    @functools.wraps(command)
    def wrapper(*args: Any, worst: int, show_failures: int | None, verbose: bool, **kwargs: Any) -> Any:
        failures = show_failures if show_failures is not None else (None if verbose else SHOWN_FAILURES)
        return command(*args, view=View(worst=worst, failures=failures, verbose=verbose), **kwargs)

    for option in reversed((
        click.option("--worst", default=10, show_default=True, type=click.IntRange(min=0),
                     help="Worst elements shown per failing case."),
        click.option("--show-failures", type=click.IntRange(min=0), metavar="N",
                     help=f"Failing cases shown in full, one per operator x data type x level first (default "
                          f"{SHOWN_FAILURES}; with --verbose all); report.html has every one."),
        click.option("-v", "--verbose", is_flag=True, help="The full operator x data type x level table instead "
                     "of a line per operator, and every failing case."),
    )):
        wrapper = option(wrapper)
    return wrapper
