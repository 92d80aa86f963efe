"""Mutation testing of loomc on model IR (reliability scenarios 15 and 17 of
docs/reliability.md): takes valid loom-dialect models, applies random
textual mutations (dimensions changed consistently or alone, integer and
float attributes set to edge values, operands swapped or replaced, ops
renamed, deleted or duplicated, element types changed, bytes flipped) and
compiles each mutant through the whole pipeline with a random set of loomc
flags (data parallel, overlap, CO2, bf16, the CUDA target).

loomc may accept a mutant or reject it; what it must never do is crash
(a signal, an LLVM fatal error, a stack dump), hang, or reject it without
saying where: an error about the IR names MUTANT:line:col. Every failure is
printed with its seed, flags and mutations, and the mutant is kept under
--keep so it can be replayed (`loomc KEPT.mlir FLAGS`).

With --from-stage=train the mutants are of the training step instead:
each model is compiled to the train stage (autodiff, optimizer and, by a
drawn flag set, data-parallel collectives, overlap or CO2's outer step),
mutated, and lowered with loom-opt --loom-cpu-pipeline or
--loom-cuda-pipeline (so comm ops, optimizer ops and every lowering pass
see odd input).

With --run N, the first N mutants that compile on one rank become
artifacts that loom-run trains for two steps, which may fail only with an
error message (a mutated task attribute, say), never with a crash.

usage: mutate_ir.py --loomc PATH --count N [--seed S] [--jobs J]
                    [--run N --loom-run PATH] [--keep DIR]
                    [--from-stage=train --loom-opt PATH]
                    [--timeout SECONDS] MODEL.mlir...
A MODEL may also be `gpt:SPEC` or `mlp:SPEC`: loomc --emit=mlir
--stage=model writes it first."""
import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile

# tensor<4x8xf32>: group 1 the dimensions, each followed by "x" ("4x8x").
TENSOR = re.compile(r"tensor<((?:[0-9?]+x)*)([a-z][a-z0-9]*)>")


def dims_of(m):
    return m.group(1).split("x")[:-1]


def tensor_type(dims, element):
    return "tensor<" + "".join(d + "x" for d in dims) + element + ">"
INT = re.compile(r"(?<![%#@\w.])-?\d+(?![\w.])")
FLOAT = re.compile(r"(?<![%#@\w])-?\d+\.\d+(?:e[-+]?\d+)?")
SSA_USE = re.compile(r"%[\w.]+(?:#\d+)?")
ELEMENT_TYPES = ["f32", "f64", "bf16", "f16", "i32", "i64", "i1"]
EDGE_INTS = [0, 1, -1, 2, 3, 7, 1 << 20, (1 << 31) - 1, (1 << 62)]
EDGE_FLOATS = ["0.0", "-0.0", "1.0e+38", "-1.0", "1.0e-45", "0x7FC00000",
               "0x7F800000"]

# Flags loomc compiles a mutant with; one is drawn per mutant.
FLAG_SETS = [
    [],
    ["--dp=2"],
    ["--dp=2", "--overlap"],
    ["--dp=2", "--co2=local-steps=2"],
    ["--dp=4", "--co2=local-steps=3,sharded=1"],
    ["--precision=bf16"],
    ["--optimizer=sgd:lr=0.1,momentum=0.9", "--clip-norm=1"],
    ["--target=cuda"],
]
STAGES = ["train", "linalg", "lowered"]
# With --from-stage=train: how the seeds are compiled, and the pipelines
# loom-opt lowers each mutant with.
TRAIN_FLAG_SETS = [
    [],
    ["--dp=2"],
    ["--dp=2", "--overlap"],
    ["--dp=2", "--co2=local-steps=2"],
    ["--dp=4", "--co2=local-steps=3,sharded=1"],
    ["--optimizer=sgd:lr=0.1,momentum=0.9", "--clip-norm=1"],
]
LOWERINGS = [
    ["--loom-cpu-pipeline"],
    ["--loom-cpu-pipeline=bf16=1"],
    ["--loom-cpu-pipeline=emulate-gpu-loops=1"],
    ["--loom-cuda-pipeline=format=isa"],
]


def body_lines(lines):
    """Indices of the lines inside a function (ops), not module headers."""
    return [i for i, l in enumerate(lines)
            if re.match(r"\s+%", l) or re.match(r"\s+(return|loom\.)", l)]


def mutate_dim_global(text, rng):
    dims = [d for m in TENSOR.finditer(text) for d in dims_of(m)
            if d.isdigit()]
    if not dims:
        return text, None
    old = rng.choice(dims)
    new = str(rng.choice([0, 1, 3, 5, int(old) + 1, int(old) * 2]))
    # Every tensor dimension and every `= N : i64` attribute with that
    # value: the model changes size consistently.
    def sub_tensor(m):
        return tensor_type([new if d == old else d for d in dims_of(m)],
                           m.group(2))
    text = TENSOR.sub(sub_tensor, text)
    text = re.sub(r"= %s : i64" % old, "= %s : i64" % new, text)
    return text, "every dimension %s -> %s" % (old, new)


def mutate_dim_one(text, rng):
    hits = [m for m in TENSOR.finditer(text) if m.group(1)]
    if not hits:
        return text, None
    m = rng.choice(hits)
    parts = dims_of(m)
    k = rng.randrange(len(parts))
    parts[k] = rng.choice(["0", "1", "?", "3", "9999999"])
    if rng.random() < 0.2:
        parts.insert(k, "2")
    repl = tensor_type(parts, m.group(2))
    return text[:m.start()] + repl + text[m.end():], "one type -> " + repl


def mutate_int(text, rng):
    hits = list(INT.finditer(text))
    if not hits:
        return text, None
    m = rng.choice(hits)
    new = str(rng.choice(EDGE_INTS))
    return (text[:m.start()] + new + text[m.end():],
            "int %s -> %s at offset %d" % (m.group(0), new, m.start()))


def mutate_float(text, rng):
    hits = list(FLOAT.finditer(text))
    if not hits:
        return text, None
    m = rng.choice(hits)
    new = rng.choice(EDGE_FLOATS)
    return (text[:m.start()] + new + text[m.end():],
            "float %s -> %s" % (m.group(0), new))


def mutate_operands(text, rng):
    lines = text.split("\n")
    cands = [i for i in body_lines(lines)
             if len(SSA_USE.findall(lines[i].split("=", 1)[-1])) >= 2]
    if not cands:
        return text, None
    i = rng.choice(cands)
    lhs, eq, rhs = lines[i].partition("=") if "=" in lines[i] else ("", "", lines[i])
    uses = list(SSA_USE.finditer(rhs))
    a, b = rng.sample(range(len(uses)), 2)
    toks = [u.group(0) for u in uses]
    toks[a], toks[b] = toks[b], toks[a]
    it = iter(toks)
    rhs = SSA_USE.sub(lambda _: next(it), rhs)
    lines[i] = lhs + eq + rhs
    return "\n".join(lines), "swap operands on line %d" % (i + 1)


def mutate_replace_use(text, rng):
    lines = text.split("\n")
    defined = []
    cands = []
    for i in body_lines(lines):
        lhs, _, rhs = lines[i].partition(" = ")
        if rhs and SSA_USE.search(rhs) and defined:
            cands.append((i, list(defined)))
        for d in SSA_USE.findall(lhs):
            defined.append(d.split(":")[0])
    if not cands:
        return text, None
    i, avail = rng.choice(cands)
    lhs, eq, rhs = lines[i].partition(" = ")
    uses = list(SSA_USE.finditer(rhs))
    u = rng.choice(uses)
    new = rng.choice(avail)
    rhs = rhs[:u.start()] + new + rhs[u.end():]
    lines[i] = lhs + eq + rhs
    return "\n".join(lines), "line %d uses %s for %s" % (i + 1, new, u.group(0))


def mutate_rename_op(text, rng):
    names = sorted(set(re.findall(r"\bloom\.[a-z_]+\b", text)))
    hits = list(re.finditer(r"\bloom\.[a-z_]+\b", text))
    if len(names) < 2:
        return text, None
    m = rng.choice(hits)
    new = rng.choice([n for n in names if n != m.group(0)])
    return (text[:m.start()] + new + text[m.end():],
            "%s -> %s" % (m.group(0), new))


def mutate_delete_line(text, rng):
    lines = text.split("\n")
    cands = body_lines(lines)
    if not cands:
        return text, None
    i = rng.choice(cands)
    gone = lines.pop(i)
    return "\n".join(lines), "delete line %d: %s" % (i + 1, gone.strip()[:60])


def mutate_duplicate_line(text, rng):
    lines = text.split("\n")
    cands = [i for i in body_lines(lines) if " = " in lines[i]]
    if not cands:
        return text, None
    i = rng.choice(cands)
    lhs, _, rhs = lines[i].partition(" = ")
    lhs = re.sub(r"%([\w.]+)", r"%dup_\1", lhs)
    lines.insert(i + 1, lhs + " = " + rhs)
    return "\n".join(lines), "duplicate line %d" % (i + 1)


def mutate_element_type(text, rng):
    hits = list(TENSOR.finditer(text))
    if not hits:
        return text, None
    new = rng.choice(ELEMENT_TYPES)
    if rng.random() < 0.5:
        old = rng.choice(hits).group(2)
        text = TENSOR.sub(lambda m: m.group(0).replace(
            m.group(2) + ">", new + ">") if m.group(2) == old else m.group(0),
            text)
        return text, "every %s -> %s" % (old, new)
    m = rng.choice(hits)
    repl = m.group(0)[:-len(m.group(2)) - 1] + new + ">"
    return text[:m.start()] + repl + text[m.end():], "one type -> " + repl


def mutate_drop_attr(text, rng):
    pats = [r" \{no_weight_decay\}", r" causal", r" init [a-z]+( scale \S+)?",
            r" \{loom\.input = \"\w+\"\}", r"attributes \{loom\.task = \{[^}]*\}\} ",
            r"kind = \"\w+\", ", r" perm = \[[0-9, ]*\]", r" axis = \d+"]
    hits = [m for p in pats for m in re.finditer(p, text)]
    if not hits:
        return text, None
    m = rng.choice(hits)
    return (text[:m.start()] + text[m.end():],
            "drop '%s'" % m.group(0).strip()[:40])


def mutate_bytes(text, rng):
    data = bytearray(text.encode())
    what = rng.choice(["flip", "truncate", "insert"])
    k = rng.randrange(len(data))
    if what == "flip":
        data[k] ^= 1 << rng.randrange(8)
    elif what == "truncate":
        del data[k:]
    else:
        data[k:k] = rng.choice([b"{", b"}", b"(", b"\x00", b"\xff", b"%", b"<"])
    return data.decode("latin-1"), "%s byte at %d" % (what, k)


MUTATIONS = [
    (mutate_dim_global, 4), (mutate_dim_one, 2), (mutate_int, 3),
    (mutate_float, 2), (mutate_operands, 2), (mutate_replace_use, 2),
    (mutate_rename_op, 3), (mutate_delete_line, 1), (mutate_duplicate_line, 2),
    (mutate_element_type, 2), (mutate_drop_attr, 2), (mutate_bytes, 1),
]


def make_mutant(text, rng):
    steps = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        fn = rng.choices([f for f, _ in MUTATIONS],
                         weights=[w for _, w in MUTATIONS])[0]
        new, what = fn(text, rng)
        if what:
            text = new
            steps.append(what)
    return text, steps


CRASH_SIGNS = ["Stack dump", "PLEASE submit", "LLVM ERROR", "Assertion",
               "UNREACHABLE", "terminate called", "Segmentation fault"]


def run_tool(cmd, path, timeout):
    """(accepted, None) when the tool behaved, else (False, the reason)."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "no answer within %ss" % timeout
    err = p.stderr.decode(errors="replace")
    if p.returncode < 0:
        return False, "killed by signal %d\n%s" % (-p.returncode, err[-2000:])
    for sign in CRASH_SIGNS:
        if sign in err:
            return False, "'%s' in its output\n%s" % (sign, err[-2000:])
    if p.returncode not in (0, 1):
        return False, "exit status %d\n%s" % (p.returncode, err[-2000:])
    if p.returncode == 1:
        if "error" not in err:
            return False, "exit 1 without an error message\n" + err[-2000:]
        # loomc's own flag errors start "loomc: error"; errors about the
        # IR must point into it.
        if (not re.search(re.escape(path) + r":\d+:\d+: error", err)
                and not re.search(r"^loom(c|-run|-opt): error", err, re.M)):
            return False, "an error that names no place in the input\n" + err[-2000:]
    return p.returncode == 0, None


def check(args, path, flags):
    if args.from_stage == "train":
        return run_tool([args.loom_opt, path, "-o", os.devnull] + flags, path,
                        args.timeout)
    return run_tool([args.loomc, path, "--emit=mlir", "-o", os.devnull] +
                    flags, path, args.timeout)


def check_run(args, path, flags):
    """Compiles the mutant to an artifact and trains it two steps."""
    out = path[:-len(".mlir")]
    flags = [f for f in flags if not f.startswith("--stage")]
    ok, why = run_tool([args.loomc, path, "-o", out] + flags, path,
                       args.timeout)
    if why or not ok:
        return ok, why and "loomc -o: " + why
    ok, why = run_tool([args.loom_run, out, "--steps", "2"], path,
                       args.timeout)
    return ok, why and "loom-run %s --steps 2: %s" % (out, why)


def save_reproducer(args, kept, flags):
    """Compiles the kept mutant again, so that MLIR writes the failing
    stage's input and pass pipeline when a pass fails or crashes; the line
    that says how to replay them."""
    repro = kept[:-len(".mlir")] + ".repro.mlir"
    option = "--mlir-pass-pipeline-crash-reproducer=" + repro
    if args.from_stage == "train":
        cmd = [args.loom_opt, kept, "-o", os.devnull, option] + flags
    else:
        cmd = [args.loomc, kept, "--emit=mlir", "-o", os.devnull,
               option] + flags
    try:
        subprocess.run(cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        pass
    if not os.path.exists(repro):
        return "  (no pass failed: no reproducer)"
    return "  reproducer: %s --run-reproducer %s" % (
        args.loom_opt or "loom-opt", repro)


def campaign_arguments(doc):
    """The options every mutation campaign takes (this one's and
    mutate_specs.py's); `doc` is the script's docstring."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--loomc", required=True)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=60)
    return ap


def main():
    ap = campaign_arguments(__doc__)
    ap.add_argument("--keep", help="directory for the mutants that fail")
    ap.add_argument("--run", type=int, default=0,
                    help="train this many of the mutants that compile")
    ap.add_argument("--loom-run", help="the loom-run binary (with --run)")
    ap.add_argument("--from-stage", choices=["model", "train"],
                    default="model", help="what the mutants are")
    ap.add_argument("--loom-opt", help="the loom-opt binary (train stage)")
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="loom-mutants-") as work:
        sys.exit(campaign(args, work))


def campaign(args, work):
    """Runs the mutants; the exit status."""
    seeds = []
    for spec in args.models:
        source = (["--model=" + spec] if spec.startswith(("gpt:", "mlp:"))
                  else [spec])
        for flags in (TRAIN_FLAG_SETS if args.from_stage == "train" else [[]]):
            out = subprocess.run([args.loomc] + source + flags + [
                "--emit=mlir", "--stage=" + args.from_stage], check=True,
                stdout=subprocess.PIPE).stdout.decode()
            seeds.append((" ".join([spec] + flags), out))

    rng = random.Random(args.seed)
    jobs = []
    for k in range(args.count):
        name, text = seeds[k % len(seeds)]
        mutant, steps = make_mutant(text, rng)
        flags = list(rng.choice(FLAG_SETS))
        if args.from_stage == "train":
            flags = list(rng.choice(LOWERINGS))
        elif "--target=cuda" not in flags:
            flags.append("--stage=" + rng.choice(STAGES))
        else:
            flags.append("--stage=lowered")
        path = os.path.join(work, "mutant%d.mlir" % k)
        with open(path, "w", encoding="latin-1") as f:
            f.write(mutant)
        jobs.append((k, name, path, flags, steps))

    failures = 0
    accepted = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda j: check(args, j[2], j[3]), jobs))
        # Training needs one rank and the CPU: the first --run mutants
        # that compiled with such flags.
        runnable = [j for j, (ok, _) in zip(jobs, results) if ok and
                    args.from_stage == "model" and not any(
            f.startswith(("--dp", "--target")) for f in j[3])][:args.run]
        ran = dict(zip([j[0] for j in runnable], pool.map(
            lambda j: check_run(args, j[2], j[3]), runnable)))
        for (k, name, path, flags, steps), (ok, why) in zip(jobs, results):
            accepted += ok
            if k in ran and ran[k][1]:
                why = ran[k][1]
                flags = [f for f in flags if not f.startswith("--stage")]
            if why is None:
                continue
            failures += 1
            tool = "loom-opt" if args.from_stage == "train" else "loomc"
            print("mutant %d of %s (seed %d), %s %s:\n  %s\n  -> %s" %
                  (k, name, args.seed, tool, " ".join(flags),
                   "\n  ".join(steps), why))
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                kept = os.path.join(args.keep, "mutant%d.mlir" % k)
                with open(kept, "w", encoding="latin-1") as f:
                    f.write(open(path, encoding="latin-1").read())
                print("  replay: %s %s %s-o /dev/null %s" % (
                    tool, kept, "" if tool == "loom-opt" else "--emit=mlir ",
                    " ".join(flags)))
                if not (k in ran and ran[k][1]):
                    print(save_reproducer(args, kept, flags))
    print("%d mutants: %d compiled, %d rejected with an error; %d trained "
          "(%d refused with an error); %d failures" % (
              args.count, accepted, args.count - accepted - failures,
              len(ran), sum(1 for ok, why in ran.values() if not ok and
                            not why), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    main()
