"""Checks of zeroth-order training with offloaded parameters (docs/zo.md).

usage:
  offload_check.py same A.jsonl B.jsonl
      every step's loss and grad_norm, and every evaluation's loss, are
      the same bit for bit in the two --metrics files
  offload_check.py bound ARTIFACT METRICS.jsonl [--factor F] [--min-ratio R]
      the step's temporaries peaked at most F (1.2) x (resident + two
      layers), the parameters resident through the step (those of no
      numbered layer) plus two layers' bytes; with --min-ratio, the model
      is at least R times that
  offload_check.py link ARTIFACT METRICS.jsonl GBPS
      no step took less than the time a link of GBPS GB/s needs to upload
      every parameter once (the uploads arrive one after the other)
"""
import json
import re
import sys


def rows(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def param_bytes(param):
    n = {"f32": 4, "f64": 8}[param["dtype"]]
    for d in param["shape"]:
        n *= d
    return n


def layer_key(name):
    """The part of a parameter's name up to its first all-digit component
    (loomc's default prefetch budget groups the same way), or None."""
    parts = name.split(".")
    for i, part in enumerate(parts):
        if re.fullmatch(r"[0-9]+", part):
            return ".".join(parts[: i + 1])
    return None


def footprint(artifact):
    """(resident bytes, one layer's bytes, all parameter bytes)."""
    params = json.load(open(f"{artifact}/manifest.json"))["params"]
    layers, resident = {}, 0
    for p in params:
        key = layer_key(p["name"])
        if key is None:
            resident += param_bytes(p)
        else:
            layers[key] = layers.get(key, 0) + param_bytes(p)
    return resident, max(layers.values(), default=0), sum(map(param_bytes, params))


def same(a, b):
    ra, rb = rows(a), rows(b)
    pick = lambda rs: [(r.get("step"), r.get("loss"), r.get("grad_norm"),
                        r.get("eval", {}).get("loss"))
                       for r in rs if "step" in r or "eval" in r]
    if pick(ra) != pick(rb):
        sys.exit(f"differ:\n{pick(ra)}\n{pick(rb)}")
    print(f"SAME {len(pick(ra))} records")


def bound(artifact, metrics, factor, min_ratio):
    resident, layer, total = footprint(artifact)
    peak = [r["summary"]["peak_temp_bytes"] for r in rows(metrics) if "summary" in r][0]
    limit = resident + 2 * layer
    print(f"peak {peak} bytes, resident {resident} + two layers {2 * layer}: "
          f"{peak / limit:.3f}x; model {total / limit:.1f}x that")
    if peak > factor * limit:
        sys.exit(f"peak above {factor}x")
    if min_ratio and total < min_ratio * limit:
        sys.exit(f"model smaller than {min_ratio}x")
    print("WITHIN")


def link(artifact, metrics, gbps):
    _, _, total = footprint(artifact)
    need = total / (gbps * 1e9)
    times = [r["step_time_s"] for r in rows(metrics) if "step" in r]
    print(f"uploads need {need * 1e3:.2f} ms a step; fastest step "
          f"{min(times) * 1e3:.2f} ms")
    if min(times) < 0.99 * need:
        sys.exit("a step was faster than its uploads")
    print("PACED")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "same":
        same(*args)
    elif cmd == "bound":
        opts = dict(zip(args[2::2], args[3::2]))
        bound(args[0], args[1], float(opts.get("--factor", 1.2)),
              float(opts.get("--min-ratio", 0)))
    elif cmd == "link":
        link(args[0], args[1], float(args[2]))
    else:
        sys.exit(__doc__)
