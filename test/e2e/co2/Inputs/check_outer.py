"""Checks the compiled CO2 outer step (loom.co2_outer, entry outer_step of an
f64 artifact) against a plain Python implementation of its equations
(dialects/Loom/IR/LoomOps.td), for the three phases of a round counter:
-1 (anchors from the parameters), 0 (no average yet) and >= 1 (the update),
on random parameters, state and means.

Usage: check_outer.py ARTIFACT_DIR libLoomRuntime.so"""
import ctypes
import json
import math
import random
import sys


def aligned(count, ctype):
    """A 64-byte aligned array of `count` ctype values (abi.h wants that)."""
    raw = (ctypes.c_char * (count * ctypes.sizeof(ctype) + 64))()
    address = (ctypes.addressof(raw) + 63) // 64 * 64
    return raw, (ctype * count).from_address(address), address


def reference(x, mean, a, p, m, rnd, cfg):
    """One element: returns new (x, anchor, prev anchor, momentum)."""
    if rnd < 0:
        return x, x, x, 0.0
    if rnd == 0:
        return a, a, a, m
    d = p - mean
    if cfg["gap_penalty"]:
        along = max(0.0, -(a - p) * d)
        d = d / (1 + cfg["gap_penalty"] * along / (d * d + 1e-30))
    m = cfg["outer_momentum"] * m + d
    if cfg["clip"]:
        m = min(max(m, -cfg["clip"]), cfg["clip"])
    a_new = a - cfg["outer_lr"] * m
    return a_new, a_new, a, m


def main():
    art, runtime = sys.argv[1], sys.argv[2]
    ctypes.CDLL(runtime, mode=ctypes.RTLD_GLOBAL)
    manifest = json.load(open(art + "/manifest.json"))
    cfg = manifest["co2"]
    lib = ctypes.CDLL(art + "/" + manifest.get("library", "model.so"))
    entry = manifest["entries"]["outer_step"]
    fn = getattr(lib, entry["symbol"])
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    rng = random.Random(7)
    keep, buffers, pointers = [], {}, []
    for arg in entry["args"]:
        n = math.prod(arg["shape"]) if arg["shape"] else 1
        ctype = ctypes.c_int64 if arg["dtype"] == "i64" else ctypes.c_double
        assert arg["dtype"] in ("i64", "f64"), "compile the artifact with --dtype=f64"
        raw, values, address = aligned(n, ctype)
        keep.append(raw)
        buffers[arg["name"]] = values
        pointers.append(address)
    params = [a["name"] for a in entry["args"] if a["role"] == "param"]
    worst, checked = 0.0, 0
    for rnd in (-1, 0, 1, 5):
        for name, values in buffers.items():
            if name != "co2.round":
                for i in range(len(values)):
                    # Momenta near the clip so that it binds for some.
                    values[i] = rng.uniform(-0.3, 0.3)
        buffers["co2.round"][0] = rnd
        before = {k: list(v) for k, v in buffers.items() if k != "co2.round"}
        fn((ctypes.c_void_p * len(pointers))(*pointers))
        for p in params:
            for i in range(len(buffers[p])):
                want = reference(before[p][i], before["co2.mean:" + p][i],
                                 before[p + ".co2_anchor"][i],
                                 before[p + ".co2_prev_anchor"][i],
                                 before[p + ".co2_momentum"][i], rnd, cfg)
                got = (buffers[p][i], buffers[p + ".co2_anchor"][i],
                       buffers[p + ".co2_prev_anchor"][i],
                       buffers[p + ".co2_momentum"][i])
                for w, g in zip(want, got):
                    err = abs(w - g) / max(1.0, abs(w))
                    worst = max(worst, err)
                    if err > 1e-12:
                        sys.exit(f"round {rnd}, {p}[{i}]: got {got}, expected {want}")
                    checked += 1
    print(f"outer step matches the reference: {checked} values, worst error {worst:.1e}")


if __name__ == "__main__":
    main()
