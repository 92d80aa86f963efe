#!/usr/bin/env bash
# An emulated cluster on one machine: N hosts as network namespaces, each
# joined to a switch namespace by a veth link shaped with `tc tbf` to RATE,
# and an MPI job run across them. The namespaces are always torn down, also
# when the job fails or the script is interrupted.
#
#   bench/cluster.sh [--hosts N] [--rate 1gbit] -- COMMAND [ARGS...]
#
# COMMAND runs under `mpirun` with one rank per host (OpenMPI; the rsh agent
# enters the host's namespace; LOOM_CLUSTER_MASTER is the first host's
# address, for peers that rendezvous over TCP such as PyTorch), e.g.
#   bench/cluster.sh --hosts 2 --rate 100mbit -- build/bin/loom-run out/gpt --steps 50
# Needs root and iproute2. Exits 77 when namespaces cannot be created (so
# tests can skip), otherwise with the job's status.
set -euo pipefail
hosts=2
rate=1gbit
while [[ $# -gt 0 ]]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "cluster.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
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
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
subnet="10.$((RANDOM % 200 + 20)).$((RANDOM % 250)).0"
prefix=${subnet%.0}
hostfile="$work/hosts"
for i in $(seq 1 "$hosts"); do
  n="${tag}h$i"
  names+=("$n")
  ip netns add "$n"
  ip link add "${tag}a$i" type veth peer name "${tag}b$i"
  ip link set "${tag}a$i" netns "$n"
  ip link set "${tag}b$i" netns "$sw"
  ip -n "$n" link set "${tag}a$i" name eth0
  ip -n "$n" addr add "$prefix.$i/24" dev eth0
  ip -n "$n" link set lo up
  ip -n "$n" link set eth0 up
  ip -n "$sw" link set "${tag}b$i" master br0
  ip -n "$sw" link set "${tag}b$i" up
  # Shape both directions: egress of the host and of its switch port.
  ip netns exec "$n" tc qdisc add dev eth0 root tbf rate "$rate" burst "$burst" latency 50ms
  ip netns exec "$sw" tc qdisc add dev "${tag}b$i" root tbf rate "$rate" burst "$burst" latency 50ms
  echo "$n slots=1" >> "$hostfile"
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
echo "cluster.sh: $hosts hosts on $prefix.0/24 at $rate" >&2
status=0
ip netns exec "${names[0]}" unshare --uts sh -c "hostname ${names[0]}; \
  mpirun --hostfile $hostfile -np $hosts --mca plm_rsh_agent $agent \
    --mca btl self,tcp --mca btl_tcp_if_include $prefix.0/24 \
    --mca oob_tcp_if_include $prefix.0/24 --bind-to none \
    -x OMPI_MCA_mpi_yield_when_idle=1 -x LOOM_CLUSTER_MASTER=$prefix.1 \
    $(printf '%q ' "$@")" || status=$?
exit $status
