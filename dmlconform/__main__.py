"""`python -m dmlconform` runs the CLI (`cli.run`: exits at once when done)."""

from dmlconform.cli import run

run()
