"""CLI commands, one module per area; each adds its commands to `dmlconform.cli.main`."""
