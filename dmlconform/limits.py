"""Every size and depth limit on what a user gives dmlconform, in one place.

The charter asks for bounded time and memory whatever the input: a file of
the wrong kind, a truncated or a hostile one must end in one error line, never
in a process killed for memory, a RecursionError or an hour of parsing.  Each
limit is checked before the work it bounds (a file's size before it is read,
a nesting depth while it is parsed), and each error names the size found, the
limit and the fix.

Each limit leaves a large margin over the biggest real input measured (the
docstrings say which and when), so no real file comes near one; raise a limit
here, with its measurement, if one ever does.
"""

from __future__ import annotations

from dataclasses import dataclass

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


@dataclass(frozen=True, slots=True)
class FileLimit:
    """The most bytes one kind of user file may hold.  ``kind`` names the
    file in the error (``a spec file``); ``typical`` says how big real ones
    are, so that the error tells a user with a bigger one what went wrong."""

    kind: str
    max_bytes: int
    typical: str


SPEC = FileLimit("a spec file", 1 * MiB, "real specs are under 10 KB")
"""Spec YAML (``specs/*.yaml``, ``lint``, ``run --specs``, ``diff``).  The
biggest committed spec, REDUCE.yaml, is 6.2 KB; 1 MiB is 160 times that and
lints in about 3 s, where a 19 MB file took 16 s and 1.3 GB."""

DOC_PAGE = FileLimit("a doc page", 2 * MiB, "real operator pages are under 20 KB")
"""Markdown pages given to ``extract``.  The biggest operator page is 12 KB
(multihead_attention), the biggest page of the whole corpus 92 KB (INDEX.md);
2 MiB is 20 times the latter."""

DOC_SIDECAR = FileLimit("a page's meta file", 1 * MiB, "real meta/*.json and meta/*.c files are under 10 KB")
"""The scraper pages' ``meta/*.json`` (front matter) and ``meta/*.c`` (struct
prototype); the biggest is 8 KB (ne-directml-dml_operator_type.json)."""

CASE_MANIFEST = FileLimit("a case manifest", 64 * MiB, "the full default suite's manifest is about 4 MB")
"""``manifest.json`` of a case folder (``run --cases``).  ``gen`` of the whole
default suite (5,201 cases) writes 3.9 MB; 64 MiB is 16 times that."""

TENSOR_FILE = FileLimit("a tensor file", 1 * GiB, "gen --large writes files of about 34 MB")
"""One ``.npy`` buffer of a case folder.  The biggest ``gen --large`` writes
is 34 MB (2^22 float64 elements); 1 GiB is 30 times that.  The header's
shape is checked against the file's real length as well (`cases.store`), so
a small file cannot claim a huge array."""

REPORT = FileLimit("a report", 64 * MiB, "a full run's report.json is about 4 MB")
"""report.json (``results``, ``merge``, ``baseline update``), results
summaries and validate reports.  A full default run writes 3.4 MB (cpu) to
3.6 MB (torch, 2,339 FAILs with their worst elements); 64 MiB is 18 times
that, room for every spec becoming evaluable and every case failing."""

GATING_FILE = FileLimit("a baseline or tolerance file", 16 * MiB,
                        "a baseline of 2,339 failures is about 600 KB")
"""Baselines (``--baseline``) and tolerance override files (``--tolerances``).
``baseline update`` of the torch run (2,339 failures) writes 610 KB, so one of
all 5,201 default cases about 1.4 MB; tolerance files hold one entry per
operator and data type, far less.  16 MiB is 11 times the former."""

NOTES = FileLimit("a notes file", 4 * MiB, "the project's notes.yaml is about 11 KB")
"""The notes file of ``results`` (one note per case-id pattern);
docs/results/notes.yaml is 10.5 KB for 103 operators (7.3 KB for 80): a
note per FAIL class, so it grows with the operators; 4 MiB is 400 times it
and parses in 1.3 s (`spec.load.parse_document` of the file repeated
400 times, this 2-core machine)."""

MAX_NESTING = 64
"""Deepest nesting of lists and mappings in any YAML or JSON file we read.
Specs need about 6 levels, report.json 7; deeper input would otherwise end in
a RecursionError in the YAML composer or in ``json.loads``."""

MAX_LITERAL_CHARS = 400
"""Longest number written in a formula.  The docs' longest literal is 9
characters (``0.166667``); a long one costs the exact evaluation quadratic
time in its digits."""

MAX_LITERAL_EXPONENT = 5000
"""Largest decimal exponent of a number in a formula (``1e5000``): past the
widest type the oracle computes in (long double, about 1e4932) every value is
infinite or zero anyway, while ``1e999999999`` as an exact fraction is a
billion-digit integer that takes minutes to build."""

MAX_EXACT_MAGNITUDE = 1 << 14
"""The exact evaluation (`formula.refine`) gives up on an element (keeping its
float64 value, as for a division by zero) where the argument of ``exp`` or its
kin (or a power's logarithm) exceeds 2**16384: exp of that is beyond every
float type (long double ends near exp(11357)), and mpmath computes it with a
log 2 of as many bits as the argument's integer part has, so
``exp(exp(exp(x)))`` ran for minutes; a 16384-bit log 2 takes milliseconds."""

MAX_EXACT_ROWS = 4096
"""Most distinct rows of operands one exact evaluation (`formula.refine`,
mpmath at 256 bits) takes on; the elements of further rows are accepted
with any value (the relaxed tier) and the case says so in a note.  One row
costs about a millisecond, more where the formula nests (CELU: ...); a row
per element would be minutes for a large case: TANH's 4.2 million freely
drawn values held 84,393 distinct tiny ones where 1 - exp(-2x) cancels in
float64, and the comparison ran past 600 s.  The generator's large cases
draw at most this many distinct rows (`draws.Request.period`), so they stay
within it; only a case folder's data can meet it."""

MAX_FORMULA_DEPTH = 32
"""Deepest nesting of a formula: brackets, operators, calls and branches
inside one another (``a + b + c`` is ``(a + b) + c``: three levels), counted
while parsing and on the parsed tree.  The docs' formulas nest at most 8 levels
(BATCH_NORMALIZATION_TRAINING).  Every walker of the tree recurses once per
level: the deepest, the printer, takes about 2.5 Python frames a level, and
a library call expands to up to 4 levels (``Sigmoid(x)`` is
``1 / (1 + exp(-x))``), so a formula at this limit needs at most about 330
frames, a third of Python's recursion limit of 1000
(tests/formula/test_parser.py runs every shape at the limit under 500)."""

MAX_TENSOR_ELEMENTS = 1 << 25
"""Most elements one tensor of a case folder may have through its sizes,
whatever its file holds: a stride-0 broadcast makes billions of elements of
one value, and the oracles and the cpu reference compute over every one
(a GEMM with K = 10^9 by broadcast ran out of memory, then was blamed on the
backend; issue #33).  The largest tensor ``gen --large`` writes has 4.2
million (ACTIVATION_CELU's large case), so 2^25 (33.5 million) is 8 times
that; a 2x2 GEMM whose A and B reach it by broadcast (K = 2^24) took 8.0 s
and 590 MB on cpu, where K = 10^7 took 5.7 s and 400 MB (``run --cases
--no-isolate``, this 2-core machine under load)."""

MAX_CASE_WORK = 1 << 30
"""Most work one case of a case folder may ask for, in elements x terms: an
output element of a contraction sums K products, so a GEMM costs its
output's elements times K (the other families' terms are their inputs'
elements, bounded by `MAX_TENSOR_ELEMENTS`).  The largest case ``gen
--large`` writes is 2^27 (GEMM k512, 2^18 outputs: 0.45 s on cpu); 2^30 is
8 times that, and a 1024 x 1024 x 1024 GEMM at the limit took 1.7 s and
110 MB (``run --cases --no-isolate``, this 2-core machine under load).  The
worst case the two limits allow together, a 32 x 32 GEMM with K = 2^20 by
broadcast (A and B at `MAX_TENSOR_ELEMENTS`, the work at this limit), took
18 s and 590 MB: bounded, and under the default ``--timeout`` of 60 s."""

MAX_TIMEOUT = 86_400.0
"""Most seconds ``run --timeout`` may give a case: a day.  The largest case
``gen --large`` writes (GEMM k512) ran in 0.45 s on cpu, and the default is
60 s; past a day a stuck backend holds a CI job for days.  The platform's own bound is
near: the workers' wait (``poll``) takes whole milliseconds in a C int, so
``--timeout 2.2e6`` (25.5 days) raised OverflowError, as ``inf`` did
(measured with ``select.poll().poll``, this machine), and a large case gets
a multiple of the timeout (`parallel.case_timeout`)."""

CASE_MEMORY_FACTOR = 16.0
CASE_MEMORY_OVERHEAD = 32 * MiB
"""What a large case needs to be made, run on cpu and judged (`memory.needed`):
this many times its tensors' bytes, plus this much.  Measured as the growth
of the address space (VmPeak over VmSize before the case was made, what
RLIMIT_AS bounds; the peak RSS grew as much) of a fresh process making one
``--large`` case and running it with ``runner.run_cases`` on cpu, this
2-core machine (bench/bench_case_memory.py, issue #33): ACTIVATION_GELU
15.3x its 34 MB (the reference's erf over the whole tensor in float64),
BATCH_NORMALIZATION 6.8x its 101 MB, REDUCE random 7.0x its 17 MB,
DEQUANTIZE_LINEAR 5.5x, ADAM_OPTIMIZER 5.1x its 134 MB, ARGMAX 5.0x, EXP
4.3x, IF (FLOAT64) 4.0x, BIT_SHIFT_LEFT (UINT64) 3.4x, and GEMM k512 12.4x
its 4 MB (a fixed 30 MB or so: the BLAS's buffers, the oracle's blocks).
16x and 32 MiB bound every one, GELU by 5%; the others need less, so the
estimate refuses some that would fit (ADAM_OPTIMIZER: 2.2 GB estimated, 0.7
GB measured), while every large case of the shipped specs still fits in a
worker under ``ulimit -v 3000000``.  A case over the memory left is
NOT_SUPPORTED with both figures before it runs; one the estimate lets
through that still runs out is that case's ERROR, never the run's end."""

MIN_DIMENSION_COUNT = 1
MAX_DIMENSION_COUNT = 8
"""A DirectML tensor has 1 to 8 dimensions (DML_TENSOR_DIMENSION_COUNT_MAX1);
a support-table cell outside that range (``1 to 999999999``) is a doc error,
refused as it is parsed instead of being expanded into a billion counts."""
