"""`lint`: spec files checked for mistakes (`lint.checks`), known findings
set apart by a baseline (`lint.baseline`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from dmlconform.commands.options import existing_paths, specs_folder
from dmlconform.errors import EXIT_CODES_HELP, ExitCode, InputError
from dmlconform.lint import baseline as known
from dmlconform.lint.checks import RULES, Finding, lint_paths
from dmlconform.lint.output import format_findings, format_text
from dmlconform.packaged import shipped_specs_arg
from dmlconform.userfiles import check_output, write_output


def _baseline_path(given: str | None, no_baseline: bool, write: bool) -> Path | None:
    """The baseline to read (or write): ``--baseline FILE``, else the one
    beside the shipped specs; none with ``--no-baseline``."""
    if no_baseline and (given or write):
        raise click.UsageError("--no-baseline cannot be combined with --baseline or --write-baseline")
    if no_baseline:
        return None
    if given:
        return Path(given)
    try:
        path = Path(shipped_specs_arg()) / known.FILE_NAME
    except InputError:  # an install without its specs: lint of PATHS still works, without a baseline
        if write:
            raise
        return None
    return path if path.is_file() or write else None


def _write(path: Path, findings: list[Finding], linted: list[Path]) -> None:
    """``--write-baseline``: every finding becomes an entry; entries of files
    not linted this time are kept, reasons survive."""
    old = known.read_baseline(path) if path.is_file() else known.LintBaseline(path, ())
    root = old.root
    elsewhere = known.outside(findings, root)
    if elsewhere:
        raise InputError(f"{elsewhere[0].path} is not under {root}, the folder of the baseline {path}: a baseline "
                         "names files relative to its folder; give --baseline FILE in a folder above the specs")
    fixed = set(known.split((), old, linted).fixed)
    kept = [e for e in old.entries if e not in fixed]
    write_output(path, known.dumps(findings, root=root, previous=old.entries, kept=kept))
    click.echo(f"{path}: {len(findings)} findings of the files linted, {len(kept)} entries of others kept", err=True)


def _report_known(split: known.Triage, path: Path, verbose: bool) -> None:
    """On standard error: the fixed entries, each at its line, and (``-v``) the known findings."""
    for entry in split.fixed:
        click.echo(f"{path}:{entry.line}:{entry.column}: fixed: no finding {entry.code} in {entry.file} says "
                   f"this any more; remove the entry (lint --write-baseline rewrites the baseline)", err=True)
    if verbose and split.known:
        click.echo(f"known findings ({path}):\n{format_text(split.known)}", err=True)


def _summary(split: known.Triage, path: Path | None, verbose: bool) -> str:
    new = split.new
    errors = sum(f.severity == "error" for f in new)
    line = f"{errors} errors, {len(new) - errors} warnings in {len({f.path for f in new})} files"
    if split.known or split.fixed:
        files = len({f.path for f in split.known})
        line += (f"; {len(split.known)} known in {files} files ({path}{'' if verbose else '; -v lists them'})"
                 + (f", {len(split.fixed)} fixed" if split.fixed else ""))
    return line


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="text: path:line:col: CODE message; json; sarif (SARIF 2.1.0 for GitHub "
                                      "code scanning); github (workflow annotations).")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too, not only on errors, and on baseline "
                                             "entries that match no finding any more (fixed).")
@click.option("--list", "list_rules", is_flag=True, help="Print the rules (code, severity, name, summary) and exit.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report to this file (atomically) "
                                                                     "instead of standard output.")
@click.option("--baseline", "baseline_file", type=click.Path(dir_okay=False), metavar="FILE",
              help=f"Known findings, reported apart and never failing lint (default: {known.FILE_NAME} beside "
                   "the shipped specs).")
@click.option("--no-baseline", is_flag=True, help="Ignore the baseline: every finding is new.")
@click.option("--write-baseline", is_flag=True, help="Write every finding into the baseline (--baseline FILE or "
                                                    "the default), keeping reasons and other files' entries; "
                                                    "exit 0.")
@click.option("-v", "--verbose", is_flag=True, help="List the known findings too (on standard error).")
def lint(paths: tuple[str, ...], fmt: str, strict: bool, list_rules: bool, output: str | None,
         baseline_file: str | None, no_baseline: bool, write_baseline: bool, verbose: bool) -> None:
    """Check spec files (default: the specs shipped with dmlconform) for mistakes.

    PATHS are spec files or folders searched for *.yaml.  Each finding names
    file:line:col, a stable rule code and the fix.  Findings the baseline
    names (known mistakes of the docs) are counted apart and do not fail;
    a baseline entry that matches no finding any more is reported as fixed.
    Exit 1 when any new finding is an error (or, with --strict, a warning or
    a fixed entry); exit 2 for a bad baseline file, at its line and column.
    """

    if list_rules:
        for rule in RULES:
            click.echo(f"{rule.code}  {rule.severity:<7}  {rule.name:<24}  {rule.summary}")
        return
    if output:
        check_output(Path(output))  # before the work, not after it
    path = _baseline_path(baseline_file, no_baseline, write_baseline)
    baseline = known.read_baseline(path) if path is not None and not write_baseline else None
    linted = existing_paths(paths or (specs_folder(None),), "spec path")
    findings = lint_paths(linted)
    if write_baseline and path is not None:
        _write(path, findings, linted)
        return
    split = known.split(findings, baseline, linted) if baseline else known.Triage(tuple(findings), (), ())
    report = format_findings(list(split.new), fmt)
    if output:
        write_output(Path(output), report + ("\n" if report else ""))
    elif report:
        click.echo(report)
    if path is not None:
        _report_known(split, path, verbose)
    click.echo(_summary(split, path, verbose), err=True)
    errors = any(f.severity == "error" for f in split.new)
    failed = errors or (strict and (split.new or split.fixed))
    sys.exit(ExitCode.FINDINGS if failed else ExitCode.OK)
