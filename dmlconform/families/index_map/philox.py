"""Philox 4x32-10 for the oracle of RANDOM_GENERATOR, written from the
paper the page links (Salmon et al., "Parallel random numbers: as easy as
1, 2, 3", SC11, section 3.3 and table 2), and the page's rules for the
state (docs/index-map.md, "RANDOM_GENERATOR").

One block of 4 words comes from a 128-bit counter (words c0..c3) and a
64-bit key (k0, k1) through 10 rounds; a round is

    (c0, c1, c2, c3) -> (hi(M1*c2) ^ c1 ^ k0, lo(M1*c2), hi(M0*c0) ^ c3 ^ k1, lo(M0*c0))

with M0 = 0xD2511F53, M1 = 0xCD9E8D57, and the key bumped by the Weyl
constants W0 = 0x9E3779B9, W1 = 0xBB67AE85 between rounds.  The page says
the counter is the state's first four elements and the key its last two,
that each execution advances the counter by ceil(outputSize / 4) and that
the counter is 128 bits; it does not say which element holds its least
significant word (``counter-order``) nor which output element takes which
word of which block (``output-layout``): `bits` computes each reading.
"""

from __future__ import annotations

import numpy as np

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
ROUNDS = 10
_MASK = np.uint64(0xFFFFFFFF)


def _mulhilo(a: int, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    product = np.uint64(a) * b.astype(np.uint64)  # < 2^64: exact in uint64
    return (product >> np.uint64(32)).astype(np.uint32), (product & _MASK).astype(np.uint32)


def blocks(counters: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox 4x32-10 of each counter (rows of 4 uint32 words c0..c3) under
    ``key`` (k0, k1): rows of 4 uint32 output words."""
    c = [counters[:, j].astype(np.uint32) for j in range(4)]
    k0, k1 = key
    for r in range(ROUNDS):
        if r:
            k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
        hi0, lo0 = _mulhilo(M0, c[0])
        hi1, lo1 = _mulhilo(M1, c[2])
        c = [hi1 ^ c[1] ^ np.uint32(k0), lo1, hi0 ^ c[3] ^ np.uint32(k1), lo0]
    return np.stack(c, axis=1)


def counter_value(words: tuple[int, ...], *, low_first: bool) -> int:
    """The 128-bit counter the state's first four words hold."""
    ordered = words[:4] if low_first else tuple(reversed(words[:4]))
    return sum(w << (32 * j) for j, w in enumerate(ordered))


def counter_words(value: int, *, low_first: bool) -> tuple[int, ...]:
    """The four state words of the 128-bit counter ``value`` (modulo 2^128)."""
    value %= 1 << 128
    words = tuple((value >> (32 * j)) & 0xFFFFFFFF for j in range(4))
    return words if low_first else tuple(reversed(words))


def bits(state: tuple[int, ...], count: int, *, low_first: bool = True, planes: bool = False) -> np.ndarray:
    """``count`` output words from ``state`` (6 words): block b from the
    counter plus b (modulo 2^128); output element i is word i % 4 of block
    i // 4 (``blocks``), or with ``planes`` word i // n of block i % n, n =
    ceil(count / 4) (each block's four words a quarter of the output apart)."""
    n = -(-count // 4)
    low_to_high = state[:4] if low_first else tuple(reversed(state[:4]))
    add = [np.arange(n, dtype=np.uint64) & _MASK, np.arange(n, dtype=np.uint64) >> np.uint64(32), 0, 0]
    carry: np.ndarray | int = 0
    columns = []
    for word, more in zip(low_to_high, add):
        total = np.uint64(word) + np.asarray(more, dtype=np.uint64) + carry  # < 2^34: no overflow
        columns.append((total & _MASK).astype(np.uint32))
        carry = total >> np.uint64(32)
    counters = np.stack([np.broadcast_to(c, (n,)) for c in (columns if low_first else columns[::-1])], axis=1)
    words = blocks(counters, (state[4], state[5]))
    flat = words.T.reshape(-1) if planes else words.reshape(-1)
    return flat[:count]


def next_state(state: tuple[int, ...], count: int, *, low_first: bool = True) -> np.ndarray:
    """The state after an execution writing ``count`` words: the counter
    advanced by ceil(count / 4) (the page's remark), the key kept."""
    advanced = counter_value(state, low_first=low_first) + -(-count // 4)
    return np.array(counter_words(advanced, low_first=low_first) + tuple(state[4:6]), dtype=np.uint32)
