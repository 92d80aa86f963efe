"""Shared helpers of the benchmarks: running Loom and the PyTorch peer on N
emulated hosts at a link rate (bench/cluster.sh), calibrating Loom's cost
model there, and recording results in bench/RESULTS.md."""
import contextlib
import datetime
import json
import os
import platform
import re
import statistics
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
CLUSTER = os.path.join(ROOT, "bench", "cluster.sh")


@contextlib.contextmanager
def results_section(title, host=False):
    """Appends a section to bench/RESULTS.md: the heading `### TITLE, DATE`
    (and the machine's name with `host`), then what the caller writes to the
    file this yields."""
    with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as out:
        where = f" ({platform.node()})" if host else ""
        out.write(f"\n### {title}, {datetime.date.today()}{where}\n\n")
        yield out


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def spec_fields(spec):
    """`gpt:vocab=..,seq=..` -> {"vocab": "..", ...}"""
    return dict(kv.split("=") for kv in spec.split(":")[1].split(","))


def loomc(spec, out, *flags):
    sh([os.path.join(BIN, "loomc"), f"--model={spec}", *flags, "-o", out])
    return json.load(open(os.path.join(out, "manifest.json")))


def calibrate(rate, path, hosts=2):
    """loom-run --calibrate on `hosts` emulated hosts at `rate` (None:
    `hosts` local ranks, no shaping); returns the file's contents."""
    run = [os.path.join(BIN, "loom-run"), "--calibrate", path]
    sh(run + ["--ranks", str(hosts)] if rate is None else
       [CLUSTER, "--hosts", str(hosts), "--rate", rate, "--", *run])
    return json.load(open(path))


def hidden_from_trace(path, warmup):
    """% of the communication after step `warmup` that no step waited for,
    from a `loom-run --trace` file: per rank, 1 - (the compute lane's waits
    in steps warmup+1..last) / (the communication lane's collectives that
    started at the end of step `warmup` or later and ended within the last
    step; the last outer round's, waited for after the last step, belongs
    to no step); the lowest over ranks."""
    events = [e for e in json.load(open(path))["traceEvents"] if e["ph"] == "X"]
    shares = []
    for rank in sorted({e["pid"] for e in events}):
        mine = [e for e in events if e["pid"] == rank]
        steps = {int(e["name"].split()[1]): e for e in mine if e["name"].startswith("step ")}
        start, end = steps[warmup]["ts"], steps[max(steps)]["ts"] + steps[max(steps)]["dur"]
        comm = sum(e["dur"] for e in mine if e["tid"] == 1 and e["ts"] >= start
                   and e["ts"] + e["dur"] <= end)
        waited = sum(e["dur"] for e in mine if e["name"] == "wait"
                     and e["ts"] >= steps[warmup + 1]["ts"] and e["ts"] + e["dur"] <= end)
        shares.append(100 * (1 - waited / comm) if comm else float("nan"))
    return min(shares)


def step_rows(metrics):
    """The step lines of a loom-run --metrics file (not the summary, the
    evaluations or the compression plans)."""
    return [r for r in map(json.loads, open(metrics)) if "step_time_s" in r]


def loom(artifact, rate, steps, warmup, tmp, hosts=2, data="synthetic", trace=False,
         env=None, extra=()):
    """Runs `artifact` on `hosts` emulated hosts (rate None: on this machine,
    `hosts` local ranks), with `env` added to the environment. Returns a
    dict: median and mean step time over the timed steps, communication per
    step, the % hidden from the run's summary line and, with `trace`, from
    its Chrome trace ("hidden_trace"); "log": what rank 0 printed to
    stderr. `extra`: more loom-run arguments."""
    metrics = os.path.join(tmp, "m.jsonl")
    trace_path = os.path.join(tmp, "trace.json")
    run = [os.path.join(BIN, "loom-run"), artifact, "--steps", str(warmup + steps),
           "--data", data, "--seed", "1", "--log-every", "0", "--metrics", metrics,
           *extra]
    if trace:
        run += ["--trace", trace_path]
    if rate is None and hosts > 1:
        run += ["--ranks", str(hosts)]
    done = sh(run if rate is None else
              [CLUSTER, "--hosts", str(hosts), "--rate", rate, "--", *run],
              env={**os.environ, **(env or {})})
    out = done.stdout
    rows = step_rows(metrics)[warmup:]
    m = re.search(r"([0-9.]+)% hidden", out)
    return {"median": statistics.median(r["step_time_s"] for r in rows),
            "mean": statistics.mean(r["step_time_s"] for r in rows),
            "comm": statistics.mean(r.get("comm_time_s", 0.0) for r in rows),
            "exposed": statistics.mean(r.get("exposed_comm_s", 0.0) for r in rows),
            "hidden": float(m.group(1)) if m else float("nan"),
            "log": done.stderr,
            **({"hidden_trace": hidden_from_trace(trace_path, warmup)} if trace else {})}


def loom_side_by_side(artifact, copies, steps, warmup, tmp):
    """Mean step time of `copies` independent one-rank runs of `artifact` at
    once on this machine: what each rank computes at when all ranks compute
    and none communicates (on a small machine the ranks share caches and
    memory bandwidth, so this is slower than one run alone)."""
    procs, paths = [], []
    for i in range(copies):
        paths.append(os.path.join(tmp, f"side{i}.jsonl"))
        procs.append(subprocess.Popen(
            [os.path.join(BIN, "loom-run"), artifact, "--steps", str(warmup + steps),
             "--data", "synthetic", "--seed", str(i), "--log-every", "0",
             "--metrics", paths[-1]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for p in procs:
        if p.wait() != 0:
            raise RuntimeError("a side-by-side loom-run failed")
    means = []
    for path in paths:
        rows = step_rows(path)[warmup:]
        means.append(statistics.mean(r["step_time_s"] for r in rows))
    return statistics.mean(means)


def torch(spec, rate, steps, warmup, hosts=2, local_sgd=0, zero=0, extra=()):
    """PyTorch 1.13 DDP (or post-local SGD every `local_sgd` steps, or with
    `zero` 1 its ZeroRedundancyOptimizer) on the emulated hosts (rate None:
    `hosts` local processes): {"median", "mean"} step time. `extra`: more
    torch_gpt_ddp.py arguments (--powersgd R)."""
    f = spec_fields(spec)
    script = ["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_gpt_ddp.py"),
              "--steps", str(steps), "--warmup", str(warmup), "--local-sgd", str(local_sgd),
              "--zero", str(zero), *extra]
    cmd = (script + ["--ranks", str(hosts)] if rate is None else
           [CLUSTER, "--hosts", str(hosts), "--rate", rate, "--", *script])
    for k in ("vocab", "seq", "dim", "heads", "layers", "batch"):
        cmd += [f"--{k}", f[k]]
    line = [l for l in sh(cmd).stdout.splitlines() if l.startswith("torch ")][-1]
    value = lambda key: float(line.split(key + "=")[1].split()[0])
    return {"median": value("step_time_s"), "mean": value("mean_step_time_s")}


def mbit(rate):
    m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", rate)
    return float(m[1]) * {"k": 1e-3, "m": 1.0, "g": 1e3, "": 1e-6}[m[2]]
