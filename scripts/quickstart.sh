#!/usr/bin/env bash
# The main job for a newcomer: install, build, compile a small GPT for two
# data-parallel ranks and train it on two local MPI ranks on text every
# Debian machine has (the licenses under /usr/share/common-licenses),
# printing progress. Extra arguments go to loom-run (e.g. --steps 1000).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
mkdir -p out
corpus=out/corpus.txt
cat /usr/share/common-licenses/* > "$corpus"
echo "loom: corpus $corpus ($(wc -c < "$corpus") bytes)"
./build/bin/loomc --model=gpt:vocab=256,seq=64,dim=64,heads=4,layers=2,batch=8 --dp=2 \
  --optimizer=adamw:lr=3e-3,beta1=0.9,beta2=0.95,wd=0.1 \
  --warmup-steps=20 --decay-steps=400 --min-lr=3e-4 --clip-norm=1.0 \
  -o out/gpt
./build/bin/loom-run out/gpt --ranks 2 --steps 400 --data "text:$corpus" --seed 1 \
  --metrics out/gpt-metrics.jsonl "$@"
