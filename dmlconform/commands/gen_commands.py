"""`gen`: write the generated cases of the specs to a case folder.

DESIGN.md, "Cases" (cases written to disk in a documented format, see
`cases.store`) and "Data flow" (a user can stop after any stage).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import click

from dmlconform.cases.model import Case
from dmlconform.cases.store import write_cases
from dmlconform.commands.options import load_specs, parse_each, specs_option
from dmlconform.errors import EXIT_CODES_HELP, InputError
from dmlconform.families import family_of
from dmlconform.families.elementwise.binding import is_runnable
from dmlconform.spec.model import DataType, FeatureLevel, Spec


@click.command(epilog=EXIT_CODES_HELP)
@specs_option("Folder (or file) of YAML specs")
@click.option("--op", "ops", multiple=True, help="Only this operator (repeatable), e.g. ACTIVATION_SHRINK.")
@click.option("--dtype", "dtypes", multiple=True, help="Only cases of this data type (repeatable), e.g. FLOAT16.")
@click.option("--feature-level", "level_text", default=FeatureLevel.FL_6_4.short, show_default=True,
              help="The feature level whose support tables the cases exercise.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the random values; the same seed gives the same cases.")
@click.option("--large", is_flag=True, help="Add the large-tensor cases (>= 2^22 elements).")
@click.option("--no-negative", is_flag=True, help="Leave out cases outside the level's table.")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False),
              help="Case folder to write, e.g. cases/default.")
def gen(specs_dir: str, ops: tuple[str, ...], dtypes: tuple[str, ...], level_text: str, seed: int, large: bool,
        no_negative: bool, output: str) -> None:
    """Generate cases from the specs with an evaluable formula and write them
    (manifest.json plus one .npy per tensor) to OUTPUT."""
    level = parse_each((level_text,), FeatureLevel.parse, "--feature-level")[0]  # it has a default
    wanted_types = set(parse_each(dtypes, DataType.parse, "--dtype"))
    chosen: list[tuple[Path, Spec]] = []
    for path, spec in load_specs(specs_dir, ops):
        ok, reason = _generable(spec, level)
        if ok:
            chosen.append((path, spec))
        elif ops or spec.formula.evaluable:
            click.echo(f"{path}: skipped: {reason}", err=True)
    if not chosen:
        raise InputError(f"no spec in {specs_dir} can be generated at {level.short}; see the reasons above")

    def cases() -> Iterator[Case]:
        for _, spec in chosen:
            family, _ = family_of(spec)
            assert family is not None  # `_generable` chose it
            for case in family.generate(spec, level, seed=seed, large=large, negative=not no_negative):
                if not wanted_types or case.dtype in wanted_types:
                    yield case

    stream = cases()
    first = next(stream, None)
    if first is None:  # checked before anything is written
        raise InputError(f"--dtype {', '.join(dtypes)}: no case of these data types at {level.short}")
    count = write_cases(itertools.chain((first,), stream), output,
                        spec_paths={s.operator: str(p) for p, s in chosen})
    plural = "s" if len(chosen) != 1 else ""
    click.echo(f"wrote {count} cases of {len(chosen)} operator{plural} at {level.short} (seed {seed}) to {output}")


def _generable(spec: Spec, level: FeatureLevel) -> tuple[bool, str]:
    """Whether a family makes cases of ``spec`` at ``level``, and if not, why
    (its family's ``generable``; the element-wise family's test where none
    claims the spec, which says why)."""
    family, _ = family_of(spec)
    return (family.generable if family is not None else is_runnable)(spec, level)
