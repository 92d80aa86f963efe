"""Mutation testing of loomc's other inputs (reliability scenario 15): the
specs of --model, --optimizer, --co2, --compress and --link, and
--calibration files.
Each mutant sets one to three fields of a valid spec (or numbers and
strings of a calibration file written by `loom-run --calibrate`) to edge
values (0, -1, huge, NaN, inf, empty, malformed), or drops or doubles a
part, and compiles a small model to the train stage with it.

loomc may accept a mutant or refuse it; it must not crash, hang (a spec
that asked for 2^62 layers once kept it building forever), or refuse it
without a `loomc: error:` line: the rules of mutate_ir.py's run_tool.

usage: mutate_specs.py --loomc PATH --count N [--seed S] [--jobs J]
                       [--calibration FILE...] [--timeout SECONDS]
"""
import concurrent.futures
import os
import random
import re
import sys
import tempfile

from mutate_ir import campaign_arguments, run_tool

MODEL = "gpt:vocab=32,seq=8,dim=16,heads=2,layers=1,batch=2"
SPECS = {
    "--model": [MODEL, "mlp:in=4,hidden=8,out=3,layers=2,batch=2"],
    "--optimizer": ["adamw:lr=0.001,beta1=0.9,beta2=0.95,eps=1e-8,wd=0.1",
                    "sgd:lr=0.1,momentum=0.9,wd=0.01"],
    "--co2": ["local-steps=4,outer-lr=0.8,outer-momentum=0.2,gap-penalty=2,"
              "clip=1,sharded=1", "local-steps=auto", "on"],
    "--link": ["bw=1gbit,lat=50us", "bw=10mbit", "lat=5ms"],
    "--compress": ["powersgd:rank=2,warmup=5", "quant:bits=4", "topk:density=0.1",
                   "lgreco:rank=2,warmup=3,every=10,objective=bytes", "bf16", "none"],
}
EDGES = ["0", "-1", "1e308", "nan", "inf", "-inf", "9223372036854775807",
         "18446744073709551616", "4611686018427387904", "", "1e-320", "0x10",
         " 1", "1,", "=", ",,", "auto"]
JSON_EDGES = ["0", "-1", "1e308", "-1e308", "1e-320", "NaN", "Infinity",
              "9223372036854775807", "-9223372036854775808", '""', "null",
              "[]", "{}", "true", "1e999"]


def mutate_spec(rng):
    """(the flag it mutates, loomc's arguments)."""
    flag = rng.choice(sorted(SPECS))
    parts = rng.choice(SPECS[flag]).replace(":", ":,").split(",")
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(parts))
        if "=" in parts[i] and rng.random() < 0.8:
            parts[i] = parts[i].split("=", 1)[0] + "=" + rng.choice(EDGES)
        else:
            parts[i] = rng.choice(EDGES + [parts[i][::-1], parts[i] * 2])
    spec = ",".join(parts).replace(":,", ":")
    args = ["--model=" + (spec if flag == "--model" else MODEL)]
    if flag != "--model":
        args.append(flag + "=" + spec)
    if flag in ("--co2", "--compress") or rng.random() < 0.3:
        args.append("--dp=2")
    if flag == "--link" and rng.random() < 0.5:
        args += ["--dp=2", "--overlap"]
    return flag, args


def mutate_calibration(rng, text, path):
    for _ in range(rng.randint(1, 3)):
        tokens = list(re.finditer(r'-?\d+(\.\d+)?([eE][-+]?\d+)?|"[^"]*"', text))
        if tokens and rng.random() < 0.7:
            m = rng.choice(tokens)
            text = text[:m.start()] + rng.choice(JSON_EDGES) + text[m.end():]
        else:
            i = rng.randrange(len(text))
            text = text[:i] + text[i + rng.randint(0, 5):]
    with open(path, "w") as f:
        f.write(text)
    args = ["--model=" + MODEL, "--calibration=" + path]
    return args + rng.choice([[], ["--dp=2", "--overlap"],
                              ["--dp=2", "--co2=local-steps=auto"]])


def main():
    ap = campaign_arguments(__doc__)
    ap.add_argument("--calibration", nargs="*", default=[],
                    help="calibration files to mutate (loom-run --calibrate)")
    args = ap.parse_args()
    calibrations = [open(p).read() for p in args.calibration]
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="loom-specs-") as work:
        jobs = []
        for k in range(args.count):
            if calibrations and rng.random() < 0.3:
                what = "--calibration"
                loomc_args = mutate_calibration(
                    rng, rng.choice(calibrations),
                    os.path.join(work, "calibration%d.json" % k))
            else:
                what, loomc_args = mutate_spec(rng)
            jobs.append((k, what, loomc_args + [
                "--emit=mlir", "--stage=train", "-o", os.devnull]))
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda j: run_tool(
                [args.loomc] + j[2], "", args.timeout), jobs))
        failures = 0
        for (k, what, loomc_args), (ok, why) in zip(jobs, results):
            if why is None:
                continue
            failures += 1
            print("mutant %d of %s (seed %d): loomc %s\n  -> %s" % (
                k, what, args.seed, " ".join(loomc_args), why))
        accepted = sum(ok for ok, _ in results)
        print("%d mutants: %d compiled, %d refused with an error; %d failures"
              % (args.count, accepted, args.count - accepted - failures,
                 failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
