"""Builds the hand-written artifact softmax_dp.c into OUTDIR (model.so and
manifest.json), for the runtime's multi-rank tests that need no compiler.

usage: softmax_artifact.py OUTDIR --include DIR --batch B [--dp R]
                           [--collectives none|all_reduce|rs_ag]
"""
import argparse
import json
import os
import subprocess

ap = argparse.ArgumentParser()
ap.add_argument("outdir")
ap.add_argument("--include", required=True, help="runtime/include")
ap.add_argument("--batch", type=int, required=True)
ap.add_argument("--dp", type=int, default=0, help="mesh size; 0: no mesh")
ap.add_argument("--collectives", default="all_reduce",
                choices=["none", "all_reduce", "rs_ag"])
args = ap.parse_args()

F, C = 8, 4
os.makedirs(args.outdir, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))
subprocess.run(
    ["cc", "-O2", "-shared", "-fPIC", "-I", args.include,
     f"-DBATCH={args.batch}", f"-DRANKS={max(args.dp, 1)}",
     "-DCOLLECTIVES=%d" % ["none", "all_reduce", "rs_ag"].index(args.collectives),
     os.path.join(here, "softmax_dp.c"), "-o",
     os.path.join(args.outdir, "model.so"), "-lm"], check=True)


def tensor(name, shape, dtype="f64", **extra):
    return dict(name=name, shape=shape, dtype=dtype, **extra)


def arg(role, name, shape, dtype="f64"):
    return dict(role=role, name=name, shape=shape, dtype=dtype)


zeros = {"kind": "zeros", "scale": 0.0}
params = [tensor("W", [C, F], init={"kind": "normal", "scale": 0.1}),
          tensor("b", [C], init=zeros)]
state = [tensor("W.momentum_buffer", [C, F], param="W", init=zeros),
         tensor("b.momentum_buffer", [C], param="b", init=zeros)]
inputs = [tensor("x", [args.batch, F]), tensor("y", [args.batch], "i32")]
train_args = ([arg("param", p["name"], p["shape"]) for p in params] +
              [arg("state", s["name"], s["shape"]) for s in state] +
              [arg("step", "step", [], "i64")] +
              [arg("input", i["name"], i["shape"], i["dtype"]) for i in inputs] +
              [arg("output", o, []) for o in ("loss", "lr", "grad_norm")])
manifest = {
    "format_version": 1,
    "generator": "softmax_artifact.py",
    "library": "model.so",
    "dtype": "f64",
    "model": {"kind": "softmax", "spec": f"softmax:features={F},classes={C}"},
    "task": {"kind": "classify", "batch": args.batch, "features": F,
             "classes": C},
    "params": params,
    "state": state,
    "inputs": inputs,
    "optimizer": {"kind": "sgd", "lr": 0.1, "momentum": 0.9},
    "entries": {"train_step": {"symbol": "loom_train_step",
                               "args": train_args}},
}
if args.dp:
    manifest["mesh"] = {"axes": ["dp"], "shape": [args.dp]}
with open(os.path.join(args.outdir, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1)
