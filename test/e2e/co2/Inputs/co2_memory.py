"""Compares the CO2 buffers per rank of a replicated and a sharded artifact,
from their manifests: the outer state (state tensors of CO2), the mean
inputs of the outer step, the outer step's output, and the runtime's round
buffer (the parameters and the loss slot; ranks x shard elements when
sharded). Prints elements and the ratio; fails unless the sharded outer
state is 3 slices of ceil((parameters + 1) / ranks).

usage: co2_memory.py REPLICATED_ARTIFACT SHARDED_ARTIFACT"""
import json
import math
import sys


def load(path):
    return json.load(open(path + "/manifest.json"))


def count(t):
    return math.prod(t["shape"])


def buffers(m):
    co2 = m["co2"]
    outer = [s for s in m["state"] if ".co2_" in s["name"]]
    means = [i for i in m["inputs"] if i["name"].startswith("co2.") and i["name"] != "co2.round"]
    out = sum(count(a) for e in m["entries"].values() for a in e["args"]
              if a["role"] == "output" and a["name"].startswith("co2."))
    return outer, means, out


rep, sh = load(sys.argv[1]), load(sys.argv[2])
ranks = sh["co2"]["ranks"]
params = sum(count(p) for p in rep["params"] if any(
    s["name"] == p["name"] + ".co2_anchor" for s in rep["state"]))
r_outer, r_means, r_out = buffers(rep)
s_outer, s_means, s_out = buffers(sh)
slice_ = sh["co2"]["shard_elements"]
if slice_ != math.ceil((params + 1) / ranks):
    sys.exit(f"shard_elements {slice_}, expected ceil(({params} + 1) / {ranks})")
if sorted(count(s) for s in s_outer) != [slice_] * 3:
    sys.exit(f"sharded outer state {[(s['name'], s['shape']) for s in s_outer]}")
r_total = sum(count(s) for s in r_outer) + sum(count(i) for i in r_means) + r_out + params + 1
s_total = sum(count(s) for s in s_outer) + sum(count(i) for i in s_means) + s_out + slice_ * ranks
print(f"replicated: outer state 3 x {params} elements, mean inputs {sum(count(i) for i in r_means)}")
print(f"sharded: outer state 3 x {slice_} elements (1/{ranks} of the parameters and the loss slot), "
      f"mean inputs {sum(count(i) for i in s_means)}")
print(f"per rank, sharded / replicated: {s_total / r_total:.3f} ({s_total} / {r_total} elements)")
