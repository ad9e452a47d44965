"""`validate`: the docs' tensor-support tables held against the real DirectML library.

DESIGN.md, "Backends" (the real libdirectml.so validates operator descs here
without a GPU).  Plans descs from the specs (backends/directml/tables.py),
has the library judge them in a subprocess (backends/directml/desc_worker.py),
prints the disagreements as a table, writes report.json atomically and, with
--markdown, the docs/results page.  --from-report renders that page again
from a report.json without the library.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from dmlconform import limits
from dmlconform.atomic import write_atomic
from dmlconform.backends.directml import domains
from dmlconform.backends.directml import tables as v
from dmlconform.backends.directml.desc_worker import validate_descs
from dmlconform.backends.directml.fake_device import Capabilities
from dmlconform.backends.directml.library import TORCH_DIRECTML, TORCH_DIRECTML_VERSION, Unavailable, validator_libs
from dmlconform.commands.options import backend_options, console, load_specs, specs_option
from dmlconform.errors import EXIT_CODES_HELP, ExitCode, InputError
from dmlconform.spec.model import FeatureLevel
from dmlconform.userfiles import read_json

VALIDATE_EXIT_HELP = EXIT_CODES_HELP + """

\b
validate: 0 the library and the docs agree, 1 disagreements found,
3 the validator cannot run here (no libdirectml.so, no download, no cc;
--skip-unavailable makes that 0)."""


def _backend_options(pairs: tuple[str, ...]) -> dict[str, str]:
    options = backend_options(pairs)
    for key in options.keys() - {"dml_path"}:
        raise InputError(f"--backend-arg {key}: validate knows dml_path=PATH (libdirectml.so)")
    return options


def _caps(text: str) -> dict[str, Any]:
    try:
        caps = Capabilities.parse(text)
    except ValueError as exc:
        raise InputError(f"--capabilities: {exc}") from None
    return {"fp16": caps.fp16, "int64": caps.int64, "fp64": caps.fp64}


def _canonical_command(ops: tuple[str, ...], caps_text: str) -> str:
    parts = ["dmlconform", "validate", "--backend", "directml"]
    parts += [x for op in sorted(ops) for x in ("--op", op)]
    if caps_text != "all":
        parts += ["--capabilities", caps_text]
    return " ".join(shlex.quote(p) for p in parts)


def build_report(specs: list[Any], libs: Any, caps: dict[str, Any], *, command: str) -> dict[str, Any]:
    """Run the validator over every spec; the report as plain data."""

    paths = {s.operator: p for p, s in specs}
    device, _ = validate_descs(libs, paths, [], caps=caps)
    if device.max_level is None:
        raise Unavailable(f"DMLCreateDevice1 on the fake device gave {device.created}")
    max_level = FeatureLevel.parse(device.max_level)
    plans = {s.operator: v.plan(s, max_level) for _, s in specs}
    jobs = [c.job for op in plans for c in plans[op]]
    folder = next(iter(paths.values())).parent if paths else Path()
    for job in jobs:  # nested descs (a recurrent operator's activations) load their specs too
        for value in job.attributes.values():
            for nested in value if isinstance(value, list) else [value]:
                if isinstance(nested, dict) and "op" in nested:
                    paths.setdefault(nested["op"], folder / f"{nested['op']}.yaml")
    _, flat = validate_descs(libs, paths, jobs, caps=caps)
    results, at = {}, 0
    for op, cfgs in plans.items():
        results[op], at = flat[at:at + len(cfgs)], at + len(cfgs)
    operators, disagreements = v.summarize([s for _, s in specs], plans, results, max_level)
    probes = [p for _, s in specs for p in domains.plan(s, max_level)]  # issue #22 item 4
    answers = validate_descs(libs, paths, [p.job for p in probes], caps=caps)[1] if probes else []
    return {
        "domains": [c.as_dict() for c in domains.summarize(probes, answers)],
        "command": command,
        "library": {"name": f"libdirectml.so from {TORCH_DIRECTML} {TORCH_DIRECTML_VERSION}"
                    if libs.dml.parent.name.startswith("torch-directml") else "libdirectml.so (DML_PATH)",
                    "file": libs.dml.name},
        "device": v.device_dict(device, caps),
        "totals": v.totals(operators),
        "operators": [o.as_dict() for o in operators],
        "disagreements": [d.as_dict() for d in disagreements],
        "configurations": {op: [{"level": c.level.short, "doc": "supported" if c.expect else "unsupported",
                                 "what": c.what, "configuration": c.label, "library": v._answer(r)}
                                for c, r in zip(plans[op], results[op])] for op in sorted(plans)},
    }


def render(report: dict[str, Any], console: Any, *, limit: int) -> None:
    """Summary and disagreements as rich tables."""

    t, dev = report["totals"], report["device"]
    console.print(Text(f"validate: {report['library']['name']}, feature level {dev['max_level']}, fake device "
                       + ", ".join(f"{k}={v}" for k, v in sorted(dev["advertised"].items()))))
    summary = Table(title="Specs")
    for key in ("specs", "checked", "unverified", "newer", "skipped", "configurations", "disagreements"):
        summary.add_column(key, justify="right")
    summary.add_row(*(str(t[k]) for k in ("specs", "checked", "unverified", "newer", "skipped", "configurations",
                                          "disagreements")))
    console.print(summary)
    _render_domains(report.get("domains", []), console)
    rows = report["disagreements"]
    if not rows:
        return
    table = Table(title=f"Disagreements (doc vs. library){'' if len(rows) <= limit else f', first {limit}'}")
    for header in ("operator", "level", "doc", "library", "what", "configuration"):
        table.add_column(header, overflow="fold")
    for d in rows[:limit]:
        table.add_row(*(Text(str(d[k])) for k in ("operator", "level", "doc", "library", "what", "configuration")))
    console.print(table)


def _render_domains(rows: list[dict[str, str]], console: Any) -> None:
    """The attribute-domain probes (issue #22 item 4), all of them: a few per attribute."""
    if not rows:
        return
    table = Table(title="Attribute domains (doc vs. library)")
    for header in ("operator", "attribute", "domain", "value", "doc", "library", "verdict"):
        table.add_column(header, overflow="fold")
    for r in rows:
        table.add_row(*(Text(str(r[k])) for k in ("operator", "attribute", "domain", "value", "doc", "library",
                                                  "verdict")))
    console.print(table)


def _page(report: dict[str, Any]) -> str:
    """The results page: the support tables, then the attribute domains."""
    return v.markdown(report, command=report["command"]) + domains.markdown(report)


@click.command(epilog=VALIDATE_EXIT_HELP)
@specs_option()
@click.option("--backend", "backend_name", default="directml", show_default=True,
              help="Only directml can validate descs.")
@click.option("--backend-arg", "backend_args", multiple=True, metavar="KEY=VALUE",
              help="dml_path=PATH: the libdirectml.so to use (default: DML_PATH, else the torch-directml wheel).")
@click.option("--op", "ops", multiple=True, metavar="NAME", help="Only these operators.")
@click.option("--capabilities", "caps_text", default="all", show_default=True, metavar="LIST",
              help="What the fake device advertises: fp16,int64,fp64 | all | none.")
@click.option("--cache", "cache_dir", type=click.Path(file_okay=False),
              help="Where the wheel and the fake libdxcore.so are kept (default ~/.cache/dmlconform).")
@click.option("--no-download", is_flag=True, help="Use a cached wheel only.")
@click.option("-o", "--output", type=click.Path(file_okay=False), default="reports/validate-directml",
              show_default=True, help="Folder for report.json.")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False),
              help="Also write the results page, e.g. docs/results/directml-validate.md.")
@click.option("--from-report", "from_report", type=click.Path(dir_okay=False),
              help="Write --markdown from this report.json; run nothing.")
@click.option("--show", "limit", default=40, show_default=True, help="Disagreements printed.")
@click.option("--skip-unavailable", is_flag=True, help="Exit 0 instead of 3 when the validator cannot run here.")
def validate(specs_dir: str, backend_name: str, backend_args: tuple[str, ...], ops: tuple[str, ...],
             caps_text: str, cache_dir: str | None, no_download: bool, output: str, markdown_path: str | None,
             from_report: str | None, limit: int, skip_unavailable: bool) -> None:
    """Hold the docs' tensor-support tables against the real DirectML library.

    For every spec and every feature level up to the library's, builds the
    desc of each tensor configuration the doc's table allows and a set just
    outside it, asks IDMLDevice::CreateOperator (on a fake D3D12 device, no
    GPU needed) and reports where the library and the doc disagree, in both
    directions.  Writes report.json; --markdown also the results page.
    """


    if from_report is not None:
        if markdown_path is None:
            raise InputError("--from-report needs --markdown PATH")
        report = _read_report(Path(from_report))
        write_atomic(Path(markdown_path), _page(report))
        click.echo(f"wrote {markdown_path}", err=True)
        return
    if backend_name != "directml":
        raise InputError(f"--backend {backend_name}: validate needs the directml backend's library")
    options, caps = _backend_options(backend_args), _caps(caps_text)
    specs = load_specs(specs_dir, ops)
    try:
        libs = validator_libs(Path(cache_dir) if cache_dir else None, dml_path=options.get("dml_path"),
                              download=not no_download)
        report = build_report(specs, libs, caps, command=_canonical_command(ops, caps_text))
    except Unavailable as exc:
        click.echo(f"backend directml cannot validate here: {exc}", err=True)
        sys.exit(ExitCode.OK if skip_unavailable else ExitCode.BACKEND_UNAVAILABLE)
    path = Path(output) / "report.json"
    write_atomic(path, json.dumps(report, indent=1, sort_keys=True) + "\n")
    render(report, console(), limit=limit)
    if markdown_path:
        write_atomic(Path(markdown_path), _page(report))
    click.echo(f"report: {path}" + (f", page: {markdown_path}" if markdown_path else ""), err=True)
    domain_findings = any(r["verdict"] == "disagree" for r in report["domains"])
    sys.exit(ExitCode.FINDINGS if report["disagreements"] or domain_findings else ExitCode.OK)


def _read_report(path: Path) -> dict[str, Any]:
    data = read_json(path, limits.REPORT)  # a regular file within the limit, valid JSON, not too deep
    if not isinstance(data, dict):
        raise InputError(f"--from-report {path}: not a validate report (not a JSON object)")
    missing = [k for k in ("command", "library", "device", "totals", "operators", "disagreements") if k not in data]
    if missing:
        raise InputError(f"--from-report {path}: not a validate report (missing {', '.join(missing)})")
    return data
