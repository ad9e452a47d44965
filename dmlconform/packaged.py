"""Where the specs shipped with dmlconform are, so that every command works
in any folder once the package is installed.

Their one copy in git is ``specs/`` at the repository root (``extract -o
specs`` writes there); pyproject.toml maps that folder into the package as
``dmlconform/specs/``, so an installed wheel holds them beside the code.  An
editable install or a run from a source checkout has no ``dmlconform/specs/``:
the checkout's own ``specs/`` are then the shipped ones.
"""

from __future__ import annotations

from pathlib import Path

from dmlconform.errors import InputError

#: The folder of the dmlconform package (an installed one, or a checkout's).
PACKAGE = Path(__file__).resolve().parent

#: How help texts name the default spec folder.
SHIPPED_SPECS = "the specs shipped with dmlconform"


def shipped_specs() -> Path:
    """The folder of the shipped specs: ``dmlconform/specs/`` of an installed
    package, else ``specs/`` of the source checkout the package runs from (a
    folder holding pyproject.toml, so that a stray ``specs`` folder beside an
    installed package is never taken for them).  Neither is an install that
    lost its data files: an input error naming both places and the fix."""

    installed = PACKAGE / "specs"
    if installed.is_dir():
        return installed
    checkout = PACKAGE.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "specs").is_dir():
        return checkout / "specs"
    raise InputError(f"{SHIPPED_SPECS} are missing: neither {installed} nor {checkout / 'specs'} is a folder; "
                     "reinstall dmlconform (pip install --force-reinstall dmlconform) or give --specs DIR")


def shipped_specs_arg() -> str:
    """`shipped_specs` as a command would have been given it: relative to the
    working folder when they lie under it (``specs`` from a checkout's root,
    so paths in messages and reports read as before), else absolute."""

    folder = shipped_specs()
    try:
        here = Path.cwd().resolve()
    except OSError:  # the working folder was removed under us: the absolute path still works
        return str(folder)
    return str(folder.relative_to(here)) if folder.is_relative_to(here) else str(folder)
