"""``--shard K/N``: split a suite across N machines by a stable hash of each
case id, so the same case always lands in the same shard whatever the other
cases, the machine or the Python version (``hash()`` is salted per process;
blake2b is not).  The N shards are disjoint and together cover every case.
DESIGN.md "Who uses it, and for what" (a CI matrix splits the suite).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise ValueError(f"{self.index}/{self.count}: K must be between 1 and N")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, case_id: str) -> bool:
        """Whether ``case_id`` belongs to this shard."""
        return shard_of(case_id, self.count) == self.index


def shard_of(case_id: str, count: int) -> int:
    """The shard (1 to ``count``) of ``case_id``: the first 8 bytes of the
    blake2b digest of its UTF-8 text, big-endian, modulo ``count``, plus 1."""
    digest = hashlib.blake2b(case_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count + 1


def parse_shard(text: str) -> Shard:
    """``"3/8"`` -> Shard(3, 8); ValueError saying what is wrong otherwise."""
    m = _SHARD.match(text)
    if not m:
        raise ValueError(f"{text!r} is not K/N; write e.g. 3/8 for the third of eight shards")
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1:
        raise ValueError(f"{text!r}: N must be 1 or more")
    return Shard(index, count)
