"""The random directions of Loom's zeroth-order training, written from
docs/zo.md alone: Philox4x32-10 (Salmon et al., SC 2011) with numpy, and the
Irwin-Hall normal loom.perturb makes of its words.

    python3 philox.py          checks Philox against Random123's
                               known-answer vectors, prints "philox ok"
"""
import sys

import numpy as np

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF


def philox4x32_10(counter, key):
    """counter: four arrays (or ints) of 32-bit words; key: two ints."""
    c = [np.asarray(w, dtype=np.uint64) & np.uint64(MASK) for w in counter]
    k0, k1 = key
    for r in range(10):
        rk0 = np.uint64((k0 + r * W0) & MASK)
        rk1 = np.uint64((k1 + r * W1) & MASK)
        p0 = np.uint64(M0) * c[0]
        p1 = np.uint64(M1) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ rk0, p1 & np.uint64(MASK),
             (p0 >> np.uint64(32)) ^ c[3] ^ rk1, p0 & np.uint64(MASK)]
    return c


def direction(n, seed, stream, step, dtype=np.float32, direction=0):
    """z of loom.perturb for the n elements of a tensor (row-major)."""
    index = np.arange(n, dtype=np.uint64)
    zeros = np.zeros(n, dtype=np.uint64)
    words = philox4x32_10(
        [index, zeros + stream, zeros + (step & MASK), zeros + direction],
        (seed & MASK, (seed >> 32) & MASK))
    s = sum((w & np.uint64(0xFFFF)) + (w >> np.uint64(16)) for w in words)
    centred = s.astype(np.int64) - 4 * 65535
    scale = dtype(1.0 / np.sqrt(8.0 * (65536.0 ** 2 - 1.0) / 12.0))
    return centred.astype(dtype) * scale


# Random123's tests/kat_vectors for philox4x32_10.
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK,) * 4, (MASK,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def main():
    for counter, key, expected in KAT:
        got = tuple(int(w) for w in philox4x32_10(counter, key))
        if got != expected:
            print(f"philox DIFFERS for counter {counter}: {got} != {expected}")
            return 1
    z = direction(1 << 20, seed=0, stream=0, step=1).astype(np.float64)
    print(f"philox ok; z over 2^20 elements: mean {z.mean():+.4f} "
          f"var {z.var():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
