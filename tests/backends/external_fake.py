"""A misbehaving external backend for the protocol tests: ``python external_fake.py MODE [ARG]``.

It implements ELEMENT_WISE_IDENTITY correctly (numpy, strides honoured) and
breaks the protocol in the way MODE says:

ok              behave
exit-at-start   print to stderr and exit 2 before the hello
silent-hello    never answer the hello
unavailable     hello with "available": false
old-protocol    hello with "protocol": 99
garbage         a non-JSON line instead of a result
wrong-id        a result naming another case
error           "status": "error" for every case
not-supported   "status": "not_supported" for every case
hang ARG        never answer a case whose id contains ARG
die ARG         exit 3 on a case whose id contains ARG (segfault on POSIX when ARG starts with "segv:")
bad-output      leave a float64 output file
count           write each run's seq on stderr; exit 0 at "bye" after writing "bye" to the file in ARG
float16 ARG     hello with "float16_accumulation": ARG (JSON text)
subset ARG      hello with "subset": ARG (JSON text); "status": "not_supported" for every case
"""

from __future__ import annotations

import json
import os
import signal
import sys

import numpy as np


def hello(mode: str) -> dict:
    if mode == "unavailable":
        return {"type": "hello", "protocol": 1, "available": False, "reason": "no device here"}
    reply = {"type": "hello", "protocol": 99 if mode == "old-protocol" else 1, "name": "fake", "device": "test",
             "version": "1", "feature_level": "6_4", "ops": ["ELEMENT_WISE_IDENTITY"]}
    if mode == "float16":
        reply["float16_accumulation"] = json.loads(sys.argv[2])
    if mode == "subset":
        reply["subset"] = json.loads(sys.argv[2])
    return reply


def identity(request: dict) -> dict:
    src, dst = request["inputs"][0], request["outputs"][0]
    x = np.load(src["file"], allow_pickle=False)
    y = np.load(dst["file"], allow_pickle=False)
    item = x.dtype.itemsize
    xv = np.lib.stride_tricks.as_strided(x, shape=src["sizes"], strides=[s * item for s in src["strides"]])
    yv = np.lib.stride_tricks.as_strided(y, shape=dst["sizes"], strides=[s * item for s in dst["strides"]])
    yv[...] = xv.copy()
    np.save(dst["file"], y, allow_pickle=False)
    return {"status": "ok"}


def result(mode: str, arg: str, request: dict) -> dict | str | None:
    case = request["id"]
    if mode == "die" and arg.split(":")[-1] in case:
        sys.stderr.write(f"fake: dying on {case}\n")
        sys.stderr.flush()
        if arg.startswith("segv:") and hasattr(signal, "SIGSEGV"):
            os.kill(os.getpid(), signal.SIGSEGV)
        os._exit(3)
    if mode == "hang" and arg in case:
        return None
    if mode == "garbage":
        return "this is not json"
    if mode == "error":
        return {"status": "error", "message": "out of device memory"}
    if mode in ("not-supported", "subset"):
        return {"status": "not_supported", "reason": "no strided tensors here"}
    if mode == "bad-output":
        np.save(request["outputs"][0]["file"], np.zeros(3), allow_pickle=False)
        return {"status": "ok"}
    if request["operator"] != "ELEMENT_WISE_IDENTITY":
        return {"status": "not_supported", "reason": f"{request['operator']} is not implemented"}
    return identity(request)


def main() -> None:
    mode, arg = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    if mode == "exit-at-start":
        sys.stderr.write("fake: cannot open the device\n")
        sys.exit(2)
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "bye":
            if mode == "count":
                with open(arg, "w") as f:
                    f.write("bye")
            return
        if message["type"] == "hello":
            if mode == "silent-hello":
                continue
            reply: dict | str | None = hello(mode)
        else:
            if mode == "count":
                sys.stderr.write(f"seq {message['seq']}\n")
            reply = result(mode, arg, message)
            if reply is None:
                continue
            if isinstance(reply, dict):
                reply = {"type": "result", "id": "another/case" if mode == "wrong-id" else message["id"], **reply}
        sys.stdout.write((reply if isinstance(reply, str) else json.dumps(reply)) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
