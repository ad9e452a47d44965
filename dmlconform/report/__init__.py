"""Reports of a run: terminal (rich), report.json, junit.xml and report.html.

Each writer is a pure function from a `RunResult` to text;
`folder.write_reports` is the one place that writes them to disk,
atomically.  DESIGN.md "Comparison, verdicts and reports".  This package
imports nothing itself: the command line reads its options (`view`) before
the run's workers start.
"""
