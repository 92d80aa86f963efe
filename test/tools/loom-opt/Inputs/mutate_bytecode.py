#!/usr/bin/env python3
"""Feeds byte-level mutants of one bytecode file to loom-opt and checks
each answer (docs/reliability.md, scenarios 15 and 16 for bytecode).

Every mutant must give exit status 0, or 1 with at least one "error:" line;
a signal, another status, a stack dump or a run past the time limit fails.
Prints how many mutants fell into each class; exits 1 on any failure, and
keeps the failing mutants next to OUT_PREFIX.

usage: mutate_bytecode.py LOOM_OPT BYTECODE COUNT SEED OUT_PREFIX
"""
import os
import random
import subprocess
import sys


def main():
    loom_opt, path, count, seed, out = sys.argv[1:6]
    data = open(path, "rb").read()
    rng = random.Random(int(seed))
    classes = {}
    failures = 0
    for i in range(int(count)):
        mutant = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            mutant[rng.randrange(len(mutant))] = rng.randrange(256)
        name = "%s.%d.mlirbc" % (out, i)
        with open(name, "wb") as f:
            f.write(mutant)
        try:
            p = subprocess.run(
                [loom_opt, "--bytecode-cpu-limit=1", name, "-o", "/dev/null"],
                capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            kind, detail = "FAIL: no answer in 60 s", ""
        else:
            err = p.stderr.decode(errors="replace")
            detail = err[-300:]
            if "Stack dump" in err or "PLEASE submit" in err:
                kind = "FAIL: stack dump"
            elif p.returncode == 0:
                kind = "read"
            elif p.returncode != 1:
                kind = "FAIL: exit status %d" % p.returncode
            elif "error:" not in err:
                kind = "FAIL: no error line"
            elif "did not finish" in err:
                kind = "rejected: reader stopped at its CPU limit"
            elif "crashed" in err:
                kind = "rejected: reader crashed in its child"
            else:
                kind = "rejected: reader or verifier error"
        classes[kind] = classes.get(kind, 0) + 1
        if kind.startswith("FAIL"):
            failures += 1
            print("mutant %d (%s): %s\n%s" % (i, name, kind, detail))
        else:
            os.remove(name)
    for kind in sorted(classes):
        print("%s: %d" % (kind, classes[kind]))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
