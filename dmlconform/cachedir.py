"""Where dmlconform keeps what it can compute again, between runs.

``$DMLCONFORM_CACHE``, else ``$XDG_CACHE_HOME/dmlconform``, else
``~/.cache/dmlconform``.  Nothing kept there changes a result: deleting the
folder costs time, never correctness (the directml backend keeps the
library wheel it downloads there, and ``dmlconform directml setup-linux`` its
Linux CPU stack, ``linux-stack/``; spec loading keeps the parsed data of the
spec texts that passed the schema, `spec.load`).
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The cache folder (it may not exist yet)."""
    env = os.environ.get("DMLCONFORM_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dmlconform"
