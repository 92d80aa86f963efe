#!/usr/bin/env python3
"""Writes the seed corpus of loom-fuzz-compile (tools/loom-fuzz-compile).

    compile_corpus.py LOOMC EXAMPLE_MLP OUTDIR [--dict FILE]

Each seed is a model, or a training step as `loomc --stage=train` prints it,
with the loomc flags to compile it under as its first line:

    // flags: --dp=2 --co2=local-steps=2

Models get every flag set below; training steps get the flags they were
built with plus those that change only the lowering. With --dict, also
writes a libFuzzer dictionary: the op names, keywords and flags of the
seeds, which byte-level mutation would rarely spell out.
"""
import argparse
import os
import re
import subprocess
import sys

MODELS = [
    None,  # EXAMPLE_MLP, the file
    "gpt:vocab=32,seq=8,dim=16,heads=2,layers=1,batch=2",
    "mlp:in=5,hidden=7,out=3,layers=2,batch=4",
]
FLAG_SETS = [
    "",
    "--dp=2",
    "--dp=2 --overlap",
    "--dp=2 --co2=local-steps=2",
    "--dp=4 --co2=local-steps=3,sharded=1",
    "--precision=bf16",
    "--optimizer=sgd:lr=0.1,momentum=0.9 --clip-norm=1",
    "--target=cuda",
    "--emulate-gpu-loops",
]
# Training steps: (flags they are built with, flags of the lowering).
TRAIN_SEEDS = [
    ("", ["", "--precision=bf16", "--target=cuda", "--emulate-gpu-loops"]),
    ("--dp=2 --overlap", [""]),
    ("--dp=2 --co2=local-steps=2", [""]),
    ("--dp=4 --co2=local-steps=3,sharded=1", ["--target=cuda"]),
]


def emit(loomc, source, flags, stage):
    cmd = [loomc] + source + flags.split() + ["--emit=mlir",
                                              "--stage=" + stage]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit("compile_corpus.py: %s failed:\n%s" %
                 (" ".join(cmd), p.stderr.decode(errors="replace")))
    return p.stdout.decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("loomc")
    ap.add_argument("example_mlp")
    ap.add_argument("outdir")
    ap.add_argument("--dict", help="also write a libFuzzer dictionary here")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)

    seeds = []
    for k, model in enumerate(MODELS):
        source = ["--model=" + model] if model else [args.example_mlp]
        text = emit(args.loomc, source, "", "model")
        for flags in FLAG_SETS:
            seeds.append(("model%d" % k, flags, text))
    source = ["--model=" + MODELS[1]]
    for built, lowerings in TRAIN_SEEDS:
        text = emit(args.loomc, source, built, "train")
        for lowering in lowerings:
            flags = " ".join(f for f in (built, lowering) if f)
            seeds.append(("train", flags, text))

    for n, (name, flags, text) in enumerate(seeds):
        path = os.path.join(args.outdir, "%02d-%s.mlir" % (n, name))
        with open(path, "w") as f:
            f.write("// flags: %s\n%s" % (flags, text))

    if args.dict:
        words = set()
        for _, flags, text in seeds:
            words.update(re.findall(r"\b(?:loom|comm)\.[a-z_0-9]+", text))
            words.update(re.findall(r"\b[a-z_]+(?=\s*=)", text))
            words.update(re.findall(r"\b(?:tensor|memref)<[^>]*>", text))
            words.update(flags.split())
        with open(args.dict, "w") as f:
            for w in sorted(words):
                f.write('"%s"\n' % w.replace("\\", "\\\\").replace('"', '\\"'))
    print("compile_corpus.py: %d seeds in %s" % (len(seeds), args.outdir))


if __name__ == "__main__":
    main()
