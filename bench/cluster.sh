#!/usr/bin/env bash
# An emulated cluster on one machine: N hosts (nodes) as network
# namespaces, each joined to a switch namespace by NICS veth links (rails:
# NIC m of every host on the switch's bridge m, its own subnet), each shaped
# with `tc tbf` to RATE, and an MPI job run across them with
# RANKS_PER_NODE ranks per host (they talk to each other over the host's
# loopback, the fast local link). The namespaces are always torn down, also
# when the job fails or the script is interrupted.
#
#   bench/cluster.sh [--hosts N] [--rate 1gbit] [--ranks-per-node K]
#                    [--nics M] -- COMMAND [ARGS...]
#
# COMMAND runs under `mpirun` (OpenMPI; the rsh agent enters the host's
# namespace; LOOM_CLUSTER_MASTER is the first host's address, for peers
# that rendezvous over TCP such as PyTorch), e.g.
#   bench/cluster.sh --hosts 2 --rate 100mbit -- build/bin/loom-run out/gpt --steps 50
# With several NICs, OpenMPI's TCP transport opens a connection per rail
# and splits large messages over them (multi-rail). Needs root and
# iproute2. Exits 77 when namespaces cannot be created (so tests can skip),
# otherwise with the job's status.
set -euo pipefail
hosts=2
rate=1gbit
per_node=1
nics=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --ranks-per-node) per_node=$2; shift 2 ;;
    --nics) nics=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "cluster.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for v in "$hosts" "$per_node" "$nics"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] ||
    { echo "cluster.sh: --hosts, --ranks-per-node and --nics take positive integers" >&2; exit 2; }
done
(( nics <= 8 )) || { echo "cluster.sh: at most 8 NICs per host" >&2; exit 2; }
[[ $# -gt 0 ]] || { echo "cluster.sh: no command (see --help)" >&2; exit 2; }

# The token bucket holds 2 ms of traffic (at least 8 KiB, > one MTU frame):
# enough for tbf to reach the rate, small enough that a link idle during
# compute does not save up a burst a real NIC would not have (a fixed 256 KiB
# bucket let synchronous all-reduces of a few hundred KiB go out at memory
# speed after every compute phase).
rate_bits=$(python3 -c "
import re,sys
m=re.fullmatch(r'([0-9.]+)([kmg]?)bit','$rate'.lower())
if not m: sys.exit('cluster.sh: --rate must look like 10gbit, 100mbit or 500kbit')
print(int(float(m[1])*{'':1,'k':1e3,'m':1e6,'g':1e9}[m[2]]))") || exit 2
burst=$(( rate_bits / 8 / 500 ))
(( burst >= 8192 )) || burst=8192
burst="${burst}b"

tag="lm$$"                      # unique per run: parallel runs do not clash
sw="${tag}sw"
names=()
cleanup() {
  # A daemon cut off from mpirun (a host whose link went down) outlives the
  # job; deleting its namespace would not end it.
  for n in "${names[@]}"; do
    ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
  done
  for n in "${names[@]}"; do ip netns del "$n" 2>/dev/null || true; done
  ip netns del "$sw" 2>/dev/null || true
  rm -rf "$work"
}
work=$(mktemp -d)
trap cleanup EXIT INT TERM

if ! ip netns add "$sw" 2>/dev/null; then
  echo "cluster.sh: cannot create network namespaces here (needs root and iproute2)" >&2
  exit 77
fi
base="10.$((RANDOM % 200 + 20)).$((RANDOM % 30 * 8))"
rail_prefix() { echo "${base%.*}.$(( ${base##*.} + $1 ))"; }
prefix=$(rail_prefix 0)
subnets=()
for m in $(seq 0 $((nics - 1))); do
  ip -n "$sw" link add "br$m" type bridge
  ip -n "$sw" link set "br$m" up
  subnets+=("$(rail_prefix "$m").0/24")
done
hostfile="$work/hosts"
for i in $(seq 1 "$hosts"); do
  n="${tag}h$i"
  names+=("$n")
  ip netns add "$n"
  ip -n "$n" link set lo up
  for m in $(seq 0 $((nics - 1))); do
    ip link add "${tag}a${i}n$m" type veth peer name "${tag}b${i}n$m"
    ip link set "${tag}a${i}n$m" netns "$n"
    ip link set "${tag}b${i}n$m" netns "$sw"
    ip -n "$n" link set "${tag}a${i}n$m" name "eth$m"
    ip -n "$n" addr add "$(rail_prefix "$m").$i/24" dev "eth$m"
    ip -n "$n" link set "eth$m" up
    ip -n "$sw" link set "${tag}b${i}n$m" master "br$m"
    ip -n "$sw" link set "${tag}b${i}n$m" up
    # Shape both directions: egress of the host and of its switch port.
    ip netns exec "$n" tc qdisc add dev "eth$m" root tbf rate "$rate" burst "$burst" latency 50ms
    ip netns exec "$sw" tc qdisc add dev "${tag}b${i}n$m" root tbf rate "$rate" burst "$burst" latency 50ms
  done
  echo "$n slots=$per_node" >> "$hostfile"
done

# The rsh agent OpenMPI uses to start a daemon "on" a host.
agent="$work/agent.sh"
cat > "$agent" <<AGENT
#!/bin/sh
host=\$1; shift
exec ip netns exec "\$host" unshare --uts sh -c "hostname \$host; \$*"
AGENT
chmod +x "$agent"
for i in $(seq 1 "$hosts"); do echo "$prefix.$i ${tag}h$i"; done > "$work/hosts.map"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "cluster.sh: $hosts hosts x $per_node ranks, $nics NIC(s) each at $rate ($(IFS=,; echo "${subnets[*]}"))" >&2
# Ranks of one host reach each other at their host's own addresses, which
# the kernel delivers over loopback (not through the shaped NICs); other
# hosts over every rail.
status=0
ip netns exec "${names[0]}" unshare --uts sh -c "hostname ${names[0]}; \
  mpirun --hostfile $hostfile -np $((hosts * per_node)) --mca plm_rsh_agent $agent \
    --mca btl self,tcp --mca btl_tcp_if_include $(IFS=,; echo "${subnets[*]}") \
    --mca oob_tcp_if_include $prefix.0/24 --bind-to none \
    -x OMPI_MCA_mpi_yield_when_idle=1 -x LOOM_CLUSTER_MASTER=$prefix.1 \
    $(printf '%q ' "$@")" || status=$?
exit $status
