"""`python -m dmlconform` runs the CLI."""

from dmlconform.cli import main

main()
