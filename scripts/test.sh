#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (lit + GoogleTest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --with-torch
bash scripts/build.sh
log=$(mktemp)
status=0
/usr/lib/llvm-22/bin/lit -sv build/test build/test/unit 2>&1 | tee "$log" || status=$?
# lit's summary as the plain "N passed, N failed" line CI reads.
summary=$(awk '{line = $0; sub(/^[^:]*: */, "", line); split(line, n, " ")}
               /^ *(Passed|Expectedly Failed) *:/ {p += n[1]}
               /^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *:/ {f += n[1]}
               /^ *Unsupported *:/ {s += n[1]}
               END {printf "%d passed, %d failed, %d skipped", p, f, s}' "$log")
rm -f "$log"
echo "$summary"
exit $status
