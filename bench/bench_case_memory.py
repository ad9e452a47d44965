"""The memory one ``--large`` case needs, over its tensors' bytes: the
measurement behind `limits.CASE_MEMORY_FACTOR` (issue #33).

Run once per case, each in a fresh process (so that no earlier case's
memory is reused): the growth of the address space (VmPeak over the VmSize
before the case is made, what RLIMIT_AS bounds) and of the resident set
(VmHWM over VmRSS) while it is made and run on cpu with `runner.run_cases`.
Linux only (/proc).  One JSON line per case:

    for c in "GEMM/FLOAT32/4d/k512/random/large" "ELEMENT_WISE_IF/FLOAT64/4d/edges/large"; do
        python bench/bench_case_memory.py "$c"; done
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from dmlconform.backends.cpu import NEWEST, CpuBackend
from dmlconform.commands.options import load_specs, specs_folder
from dmlconform.families import cases_of
from dmlconform.runner import run_cases


def status() -> dict[str, int]:
    """This process's VmSize, VmPeak, VmRSS and VmHWM, in bytes."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmSize", "VmPeak", "VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024
    return fields


def main(case_id: str) -> None:
    spec = load_specs(specs_folder(None), (case_id.split("/")[0],))[0][1]
    backend = CpuBackend()
    before = status()
    began = time.perf_counter()
    case = next(cases_of(spec, NEWEST, seed=0, large=True, keep=lambda i, _: i == case_id))
    made = time.perf_counter() - began
    tensors = sum(t.buffer.nbytes for t in (*case.inputs, *case.outputs))
    began = time.perf_counter()
    result = run_cases([(spec, case)], backend)[0]
    ran = time.perf_counter() - began
    after = status()
    print(json.dumps({"id": case_id, "outcome": result.outcome.name, "tensors_mb": round(tensors / 1e6, 1),
                      "vm_ratio": round((after["VmPeak"] - before["VmSize"]) / tensors, 2),
                      "rss_ratio": round((after["VmHWM"] - before["VmRSS"]) / tensors, 2),
                      "make_s": round(made, 1), "run_s": round(ran, 1)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
