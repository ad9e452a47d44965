"""Installing a test backend package the way pip lays out a wheel: its module
folder and a ``*.dist-info`` (METADATA and entry_points.txt, written from its
pyproject.toml) in a folder that goes on ``sys.path``.  No pip, no network,
fast; spawned worker processes inherit ``sys.path`` and so find it too."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from dmlconform.backends.registry import GROUP


def install(package: Path, site: Path) -> Path:
    """Lay out ``package`` (a folder with pyproject.toml and the module
    folders it lists) in ``site``; returns ``site``."""
    pyproject = tomllib.loads((package / "pyproject.toml").read_text())
    project = pyproject["project"]
    for module in pyproject["tool"]["setuptools"]["packages"]:
        shutil.copytree(package / module, site / module)
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    points = project["entry-points"][GROUP]
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()))
    return site
