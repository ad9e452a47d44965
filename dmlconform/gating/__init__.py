"""CI gating (issue 7): baselines of known failures, tolerance overrides,
sharding a suite across machines and merging the shard reports.

Each module is plain data in, plain data out; the files it reads go through
the spec loader's safe YAML reader, so every problem names file:line:col
(DESIGN.md "Who uses it, and for what": CI pipelines).
"""
