#!/usr/bin/env bash
# A/B of two builds on the GPU machine: the same artifacts from two packs of
# scripts/gpu-checks.sh (before and after a compiler or runtime change),
# each trained with its own pack's loom-run on the same data, alternated
# A B A B so a machine that slows down mid-run hurts both:
#
#   bash bench/gpu_ab.sh BEFORE.tar.xz AFTER.tar.xz OUT [ARTIFACT...]
#
# ARTIFACTs default to f32-cuda big-f32-cuda big-bf16-cuda gpt2-bf16-cuda.
# For each it prints the two losses' worst relative difference over the
# steps (0 when the change kept every bit) and each run's median step time
# (loom-run's step_time_s over steps 6 to 25, after warm-up), and writes
# OUT/ab.txt and the metrics files.
set -uo pipefail
cd "$(dirname "$0")/.."
die() { echo "gpu_ab: error: $*" >&2; exit 1; }
[[ $# -ge 3 ]] || die "usage: bash bench/gpu_ab.sh BEFORE.tar.xz AFTER.tar.xz OUT [ARTIFACT...]"
before=$1 after=$2 out=$3
shift 3
arts=("$@")
[[ ${#arts[@]} -gt 0 ]] || arts=(f32-cuda big-f32-cuda big-bf16-cuda gpt2-bf16-cuda)
mkdir -p "$out" || die "cannot create $out"
python=${PYTHON:-python3}
unpack() { # PACK NAME: the pack unpacked under OUT/NAME
  [[ -f $1 ]] || die "$1 is missing"
  rm -rf "$out/$2" && mkdir -p "$out/$2" && tar -C "$out/$2" -xJf "$1" || die "cannot unpack $1"
  ls -d "$out/$2"/*/ | head -1
}
a=$(unpack "$before" a) b=$(unpack "$after" b)
median_ms() { # METRICS.jsonl
  "$python" -c "
import json, statistics, sys
t = [r['step_time_s'] for r in map(json.loads, open(sys.argv[1])) if 'step' in r][5:]
print(f'{1e3 * statistics.median(t):.3f}')" "$1"
}
for art in "${arts[@]}"; do
  for round in 1 2; do
    for side in a b; do
      dir=${!side}
      "$dir/bundle/loom-run" "$dir/art/$art" --steps 25 --data synthetic --seed 1 \
        --log-every 0 --metrics "$out/$art-$side-$round.jsonl" >/dev/null 2>"$out/$art-$side-$round.err" ||
        { tail -5 "$out/$art-$side-$round.err"; die "$art ($side) failed"; }
    done
  done
  diff=$("$python" test/e2e/gpu/Inputs/compare_losses.py "$out/$art-a-1.jsonl" "$out/$art-b-1.jsonl" --rtol 1 2>&1)
  echo "$art: $diff; median step ms: before $(median_ms "$out/$art-a-1.jsonl") $(median_ms "$out/$art-a-2.jsonl")," \
    "after $(median_ms "$out/$art-b-1.jsonl") $(median_ms "$out/$art-b-2.jsonl")" | tee -a "$out/ab.txt"
done
