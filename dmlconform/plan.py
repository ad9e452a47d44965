"""How work is cut into pieces: every size knob of a run, and the one
function that packs a sequence of sized items into runs.

A run makes, sends and checks cases in pieces so that memory stays bounded
whatever the suite (a ``--large`` case has 2^22 elements and more) and fixed
costs are paid per piece rather than per case.  Each knob below says which
stage cuts by it; all of them cut with `pack`.  None changes a result: the
values drawn, the oracle's values and every verdict are the same however a
suite is cut (the tests hold each stage to that).
"""

from __future__ import annotations

from collections.abc import Sequence

#: Generation (`families.elementwise.cases`): the cases whose values are drawn in one
#: pass hold at most this many elements (a larger case is drawn alone), so a
#: pass's temporaries stay a few tens of megabytes.
DRAW_ELEMENTS = 1 << 20
#: Generation (`cases.draws`): elements whose random bits are made at a time,
#: so the 64-bit temporaries of a large tensor stay a few megabytes.
DRAW_CHUNK = 1 << 18
#: The backend (`runner`): a case goes to a backend's ``run_batch`` when it
#: has at most this many output elements (a larger one runs alone through
#: ``run``, with no joined copy of it) ...
BATCH_CASE_ELEMENTS = 1 << 16
#: ... and one ``run_batch`` call gets cases of at most this many output
#: elements in all.
BATCH_ELEMENTS = 1 << 19
#: The comparison (`judge`): elements of a batch's outputs evaluated by the
#: oracle and compared at a time, so the temporaries of a large case stay
#: this small.  A multiple of `ORACLE_BLOCK`, so that the oracle's blocks
#: are the same however a batch is cut.
COMPARE_ELEMENTS = 1 << 19
#: ... and for an oracle that makes many float64 passes over each block (the
#: normalization family's some forty; `oracles.base.compare_elements`): a
#: megabyte per float64 array, which the caches hold between the passes (the
#: large MVN1 case took about 8% more time at `COMPARE_ELEMENTS`, about 20%
#: more at 2^16, its per-block steps then counting).  Not everyone's: the
#: element-wise oracle's per-block steps cost more than its few passes gain
#: (bench_run.py's 2^24 softsign: 0.20 s at 2^19, 0.25 s at 2^17).
CACHED_COMPARE_ELEMENTS = 1 << 17
#: The bias check (`bias.moments`): elements summed at a time, so that its
#: float64 temporaries (half a megabyte each) stay in the cache and in
#: memory the allocator keeps (fresh pages cost a fault each).
SUM_BLOCK = 1 << 16
#: The element-wise oracle (`families.elementwise.floatrun`): elements evaluated per
#: block, float64 temporaries of a megabyte that stay in a 2 MiB L2 cache
#: (measured best of 2**15 to 2**18 on the bench).
ORACLE_BLOCK = 1 << 17
#: The contraction oracle (`families.contraction.oracle`) with a NaN or inf among
#: the operands sums the products one by one (IEEE's rules, not the BLAS's):
#: at most this many float64 products at a time (32 MiB), rows of A by rows.
CONTRACTION_PRODUCTS = 1 << 22
#: Workers (`parallel`): a chunk sent to a worker holds at most this many
#: cases ...
WORKER_CASES = 256
#: ... and at most this many tensor elements (a larger case goes alone).
WORKER_ELEMENTS = 1 << 22
#: Cases with more tensor elements than this are large: they get
#: proportionally more time before they are TIMEOUT (`parallel`).
LARGE_ELEMENTS = 1 << 22

#: The window oracle (`families.window.oracle.convolve`): float64 patch
#: elements (output positions times the taps each reads) gathered at a
#: time, so a large convolution's im2col matrix exists one block of rows at
#: a time (2 MiB) rather than whole (tens of megabytes).
WINDOW_PATCHES = 1 << 18

#: Between runs (`spec.load`): the parsed spec texts the cache folder keeps,
#: the newest (the shipped specs are 176, so many versions of them and of the
#: parser); each version of either leaves files of its own.
CACHED_SPECS = 4096


def pack(sizes: Sequence[int], *, most: int, most_items: int | None = None) -> list[range]:
    """Contiguous ranges over ``len(sizes)`` items, in order, covering them
    all: each holds items of at most ``most`` in total size (an item larger
    than that alone) and at most ``most_items`` items (no limit when None)."""
    out: list[range] = []
    start, total = 0, 0
    for i, size in enumerate(sizes):
        full = total + size > most or (most_items is not None and i - start >= most_items)
        if i > start and full:
            out.append(range(start, i))
            start, total = i, 0
        total += size
    if sizes:
        out.append(range(start, len(sizes)))
    return out


assert COMPARE_ELEMENTS % ORACLE_BLOCK == 0, "the comparison cuts batches at the oracle's block edges"
assert CACHED_COMPARE_ELEMENTS % ORACLE_BLOCK == 0, "the comparison cuts batches at the oracle's block edges"
