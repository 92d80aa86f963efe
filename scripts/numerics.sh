#!/usr/bin/env bash
# Records the per-step numerics of a fixed set of training runs, so that a
# restructuring or a change to a shared path can show that what exists does
# not drift: run `record` before the change and after it, then `compare`.
#
#   bash scripts/numerics.sh record OUT   # compiles and trains every config
#   bash scripts/numerics.sh compare A B  # bit for bit; exit 1 on a difference
#   LOOM_NUMERICS_LOOMC_ARGS='--segment-ops=100' bash scripts/numerics.sh record OUT
#   LOOM_NUMERICS_LAYERS=4 ...            # the GPT configs with 4 layers
#
# OUT/numerics.tsv holds one line per config, rank and step: the loss, the
# rank's own loss, CO2's round loss, lr and grad_norm as exact hexadecimal
# floats (float.hex), so equal lines mean bit-identical numbers. Runs are
# deterministic on one machine (fixed seeds, fixed reduction order); OpenBLAS
# may pick other kernels on another CPU, so compare runs of one machine.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${LOOM_BIN:-build/bin}
STEPS=${LOOM_NUMERICS_STEPS:-24}
# Added to every loomc command: a variant of the compilation whose results
# must equal the default's (e.g. --segment-ops=100).
read -r -a EXTRA <<< "${LOOM_NUMERICS_LOOMC_ARGS:-}"

# More layers exercise what repeats per layer (--loom-outline-layers).
gpt=gpt:vocab=256,seq=32,dim=32,heads=4,layers=${LOOM_NUMERICS_LAYERS:-2},batch=4
schedule=(--optimizer=adamw:lr=3e-3,beta1=0.9,beta2=0.95,wd=0.1
  --warmup-steps=4 --decay-steps=16 --min-lr=3e-4 --clip-norm=1.0)
text=text:/usr/share/common-licenses/GPL-3

# name | ranks | data | loomc arguments
CONFIGS=(
  "mlp-sgd-momentum|1|synthetic|--model=mlp:in=16,hidden=32,out=4,layers=2,batch=16 --optimizer=sgd:lr=0.05,momentum=0.9"
  "gpt-adamw-schedule|1|$text|--model=$gpt ${schedule[*]}"
  "gpt-dp2|2|$text|--model=$gpt ${schedule[*]} --dp=2"
  "gpt-dp2-overlap|2|$text|--model=$gpt ${schedule[*]} --dp=2 --overlap --link=bw=1gbit,lat=50us"
  "gpt-co2|2|$text|--model=$gpt ${schedule[*]} --dp=2 --co2=local-steps=4"
  "gpt-co2-sharded|2|$text|--model=$gpt ${schedule[*]} --dp=2 --co2=local-steps=4,sharded=1"
  "gpt-bf16|1|$text|--model=$gpt ${schedule[*]} --precision=bf16"
  "gpt-zo|1|$text|--model=$gpt --zo=mezo:lr=1e-3,wd=0.1"
  "gpt-zo-offload|1|$text|--model=$gpt --zo=mezo:lr=1e-3,wd=0.1,offload=1"
)

# The metrics lines of every rank of one run as TSV lines.
extract() {
  python3 - "$@" <<'EOF'
import json, sys
name, paths = sys.argv[1], sys.argv[2:]
def h(v):
    return "null" if v is None else float(v).hex()
for rank, path in enumerate(paths):
    for line in open(path):
        r = json.loads(line)
        if "step" not in r or "loss" not in r or "eval" in r or "summary" in r:
            continue
        print("\t".join([name, str(rank), str(r["step"])] +
                        [h(r.get(k)) for k in
                         ("loss", "rank_loss", "round_loss", "lr", "grad_norm")]))
EOF
}

record() {
  local out=$1
  mkdir -p "$out"
  : > "$out/numerics.tsv"
  for config in "${CONFIGS[@]}"; do
    IFS='|' read -r name ranks data args <<< "$config"
    echo "numerics: $name" >&2
    # shellcheck disable=SC2086
    "$BIN/loomc" $args "${EXTRA[@]}" -o "$out/$name" >/dev/null
    rm -f "$out/$name.jsonl"*
    "$BIN/loom-run" "$out/$name" --ranks "$ranks" --steps "$STEPS" \
      --data "$data" --seed 7 --metrics "$out/$name.jsonl" \
      > "$out/$name.log" 2>&1 || { cat "$out/$name.log" >&2; exit 1; }
    local files=("$out/$name.jsonl")
    for ((r = 1; r < ranks; ++r)); do files+=("$out/$name.jsonl.rank$r"); done
    extract "$name" "${files[@]}" >> "$out/numerics.tsv"
  done
  echo "numerics: $(wc -l < "$out/numerics.tsv") lines in $out/numerics.tsv" >&2
}

# A run's log without what depends on the machine's speed, nor the
# process's resident peak (the allocator's and MPI's pages vary by run).
untimed() {
  sed -E 's#[0-9.]+k? (tok|rows|steps)/s#N/s#g; s#[0-9.]+ ms/step#N ms/step#g;
          s#ETA [0-9:]+#ETA#; s#in [0-9.]+ s#in N s#g; s#[0-9]+% hidden#N% hidden#
          s#process peak [0-9.]+ MiB resident#process peak N MiB resident#' "$1"
}

compare() {
  local status=0 log name
  if cmp -s "$1/numerics.tsv" "$2/numerics.tsv"; then
    echo "numerics: identical ($(wc -l < "$1/numerics.tsv") lines)"
  else
    diff "$1/numerics.tsv" "$2/numerics.tsv" | head -20
    echo "numerics: DIFFERENT" >&2
    status=1
  fi
  # What loom-run printed, timings aside, must not change either.
  for log in "$1"/*.log; do
    name=$(basename "$log")
    if ! diff <(untimed "$log") <(untimed "$2/$name"); then
      echo "numerics: $name printed something else" >&2
      status=1
    fi
  done
  return $status
}

case "${1:-}" in
  record) record "${2:?usage: numerics.sh record OUT}" ;;
  compare) compare "${2:?usage: numerics.sh compare A B}" "${3:?}" ;;
  *) sed -n '2,15p' "$0"; exit 2 ;;
esac
