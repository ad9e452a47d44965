"""`lint`: spec files checked for mistakes (`lint.checks`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from dmlconform.commands.options import existing_paths, specs_folder
from dmlconform.errors import EXIT_CODES_HELP, ExitCode
from dmlconform.lint.checks import RULES, lint_paths
from dmlconform.lint.output import format_findings
from dmlconform.userfiles import check_output, write_output


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="text: path:line:col: CODE message; json; sarif (SARIF 2.1.0 for GitHub "
                                      "code scanning); github (workflow annotations).")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too, not only on errors.")
@click.option("--list", "list_rules", is_flag=True, help="Print the rules (code, severity, name, summary) and exit.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report to this file (atomically) "
                                                                     "instead of standard output.")
def lint(paths: tuple[str, ...], fmt: str, strict: bool, list_rules: bool, output: str | None) -> None:
    """Check spec files (default: the specs shipped with dmlconform) for mistakes.

    PATHS are spec files or folders searched for *.yaml.  Each finding names
    file:line:col, a stable rule code and the fix.  Exit 1 when any finding is
    an error (or, with --strict, a warning).
    """

    if list_rules:
        for rule in RULES:
            click.echo(f"{rule.code}  {rule.severity:<7}  {rule.name:<24}  {rule.summary}")
        return
    if output:
        check_output(Path(output))  # before the work, not after it
    findings = lint_paths(existing_paths(paths or (specs_folder(None),), "spec path"))
    report = format_findings(findings, fmt)
    if output:
        write_output(Path(output), report + ("\n" if report else ""))
    elif report:
        click.echo(report)
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    files = len({f.path for f in findings})
    click.echo(f"{errors} errors, {warnings} warnings in {files} files", err=True)
    failed = errors or (strict and warnings)
    sys.exit(ExitCode.FINDINGS if failed else ExitCode.OK)
