"""Zeroth-order fine-tuning against first-order fine-tuning: a GPT
pretrained with AdamW on one corpus (the GPL-3 and GFDL licence texts),
then fine-tuned on a shifted corpus (Python's standard library source) by
MeZO (loomc --zo=mezo) and by AdamW, from the same checkpoint, the held-out
loss of the shifted corpus (its last tenth, never trained on) measured
along the way. The x-axis counts forward passes: a ZO step makes two, a
first-order step one (and a backward pass, about twice a forward's work).

Writes bench/zo_finetune.png and prints a Markdown table; --record appends
it and the command to bench/RESULTS.md.

Usage: /usr/bin/python3 bench/zo_finetune.py [--zo-steps 3000] [--fo-steps 300]
       [--record]
(run from the repository root after building; needs matplotlib)"""
import argparse
import glob
import json
import os
import tempfile

from clusterlib import BIN, ROOT, results_section, sh

SPEC = "gpt:vocab=256,seq=64,dim=64,heads=4,layers=2,batch=8"


def corpus(paths, out):
    text = b"".join(open(p, "rb").read() for p in paths)
    open(out, "wb").write(text)
    return len(text)


def split(path, train, heldout):
    text = open(path, "rb").read()
    cut = len(text) * 9 // 10
    open(train, "wb").write(text[:cut])
    open(heldout, "wb").write(text[cut:])


def evals(metrics):
    rows = [json.loads(l) for l in open(metrics) if l.strip()]
    return [(r["eval"]["step"], r["eval"]["loss"]) for r in rows if "eval" in r]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pretrain-steps", type=int, default=1500)
    ap.add_argument("--zo-steps", type=int, default=3000)
    ap.add_argument("--fo-steps", type=int, default=300)
    ap.add_argument("--zo", default="mezo:eps=1e-3,lr=2e-4")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    loomc, run = os.path.join(BIN, "loomc"), os.path.join(BIN, "loom-run")
    with tempfile.TemporaryDirectory() as tmp:
        f = lambda name: os.path.join(tmp, name)
        corpus(["/usr/share/common-licenses/GPL-3", "/usr/share/common-licenses/GFDL-1.3"],
               f("pretrain.txt"))
        corpus(sorted(glob.glob("/usr/lib/python3.11/[a-c]*.py")), f("shifted.txt"))
        split(f("shifted.txt"), f("train.txt"), f("heldout.txt"))
        sh([loomc, f"--model={SPEC}", "--optimizer=adamw:lr=3e-3", "-o", f("adamw")])
        sh([loomc, f"--model={SPEC}", f"--zo={args.zo}", "-o", f("zo")])
        sh([run, f("adamw"), "--steps", str(args.pretrain_steps), "--data",
            "text:" + f("pretrain.txt"), "--save", f("pretrained"), "--log-every", "0"])
        weights = os.path.join(f("pretrained"), "model.safetensors")
        eval_args = ["--eval-data", "text:" + f("heldout.txt"), "--eval-batches", "40"]
        curves = {}
        for name, art, steps, per_step in [("ZO (MeZO)", f("zo"), args.zo_steps, 2),
                                           ("first-order (AdamW)", f("adamw"), args.fo_steps, 1)]:
            every = max(1, steps // 20)
            sh([run, art, "--steps", str(steps), "--load", weights, "--data",
                "text:" + f("train.txt"), "--metrics", f("m.jsonl"), "--log-every", "0",
                "--eval-every", str(every), *eval_args])
            sh([run, art, "--eval", "--load", weights, "--data", "text:" + f("heldout.txt"),
                "--eval-batches", "40", "--metrics", f("e.jsonl")])
            start = next(r["eval"]["loss"] for r in map(json.loads, open(f("e.jsonl")))
                         if "eval" in r)
            curves[name] = [(0, start)] + [(s * per_step, l) for s, l in evals(f("m.jsonl"))]
            print(name, " ".join(f"{x}:{l:.3f}" for x, l in curves[name]), flush=True)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.figure(figsize=(7, 4))
    for name, points in curves.items():
        plt.plot([x for x, _ in points], [l for _, l in points], marker=".", label=name)
    plt.xscale("symlog", linthresh=10)
    plt.xlabel("forward passes")
    plt.ylabel("held-out loss, shifted corpus")
    plt.title(f"Fine-tuning from a pretrained {SPEC.split(':')[0]} (2 layers, dim 64)")
    plt.legend()
    plt.tight_layout()
    plt.savefig(os.path.join(ROOT, "bench", "zo_finetune.png"))
    rows = ["| fine-tuning | steps | forward passes | held-out loss before | after | change |",
            "|---|---|---|---|---|---|"]
    for name, points in curves.items():
        (_, first), (x, last) = points[0], points[-1]
        steps = args.zo_steps if name.startswith("ZO") else args.fo_steps
        rows.append(f"| {name} | {steps} | {x} | {first:.4f} | {last:.4f} | "
                    f"{(last - first) / first * 100:+.1f} % |")
    table = "\n".join(rows)
    print(table)
    if args.record:
        with results_section("Zeroth-order fine-tuning from a pretrained checkpoint") as out:
            cmd = (f"/usr/bin/python3 bench/zo_finetune.py --pretrain-steps {args.pretrain_steps} "
                   f"--zo-steps {args.zo_steps} --fo-steps {args.fo_steps} --zo {args.zo}")
            out.write(f"`{cmd} --record`\n\n{table}\n\n![ZO vs first-order fine-tuning]"
                      "(zo_finetune.png)\n")


if __name__ == "__main__":
    main()
