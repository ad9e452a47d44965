"""dmlconform: conformance test harness and spec linter for DirectML operators."""

__version__ = "0.1.0"
