#!/usr/bin/env bash
# Inter-node throughput with 1 and 2 NICs per emulated host (bench/cluster.sh
# rails): the all-reduce time per step of a data-parallel GPT (~9.6 MB of
# gradients) run synchronously (--async-collectives off, so the time is the
# collectives', nothing hidden), for 2 hosts x 1 rank and 2 hosts x 2 ranks.
#
#   bash bench/nic_rails.sh [RATE]      # default 200mbit
#
# Prints one line per layout and NIC count, and the ratio 1 NIC / 2 NICs.
# LOOM_MPI_HIERARCHICAL=1 in the environment: all-reduces by host (a reduce
# inside each host, an all-reduce between hosts, a broadcast back).
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${1:-200mbit}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -c "print('abcdefgh ' * 3000)" > "$work/corpus.txt"
for layout in "2 1" "2 2"; do
  read -r hosts per <<< "$layout"
  ranks=$((hosts * per))
  build/bin/loomc --model=gpt:vocab=256,seq=32,dim=256,heads=4,layers=3,batch=2 \
    --dp=$ranks -o "$work/gpt$ranks" >/dev/null
  declare -A ms=()
  for nics in 1 2; do
    line=$(bash bench/cluster.sh --hosts "$hosts" --ranks-per-node "$per" \
      --nics "$nics" --rate "$rate" -- "$PWD/build/bin/loom-run" "$work/gpt$ranks" \
      --steps 8 --data "text:$work/corpus.txt" --log-every 0 \
      --async-collectives off 2>&1 | grep '^communication')
    ms[$nics]=$(sed -E 's/communication ([0-9.]+) ms.*/\1/' <<< "$line")
    echo "hosts=$hosts ranks/host=$per nics=$nics rate=$rate: $line"
  done
  python3 -c "print('hosts=$hosts ranks/host=$per: 2 NICs move the all-reduce %.2fx as fast as 1' % (${ms[1]} / ${ms[2]}))"
done
