#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (lit + GoogleTest),
# then the runtime's tests under sanitizers (scripts/sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's time goes to the log, to keep CI's run (a fresh clone and an
# empty ccache on 2 cores) in view: well under 45 minutes in all.
step() { echo "test.sh: $1 took $((SECONDS - start)) s"; start=$SECONDS; }
start=$SECONDS
bash scripts/install-deps.sh --with-torch
step "installing"
bash scripts/build.sh
step "the build"
log=$(mktemp)
status=0
/usr/lib/llvm-22/bin/lit -sv build/test build/test/unit 2>&1 | tee "$log" || status=$?
step "the lit and unit tests"
# The runtime again, built with AddressSanitizer + UBSan and with
# ThreadSanitizer: its unit tests and the lit tests that run loom-run.
bash scripts/sanitize.sh all 2>&1 | tee -a "$log" || status=1
step "the sanitizer builds and tests"
# lit's summary as the plain "N passed, N failed" line CI reads.
summary=$(awk '{line = $0; sub(/^[^:]*: */, "", line); split(line, n, " ")}
               /^ *(Passed|Expectedly Failed) *:/ {p += n[1]}
               /^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *:/ {f += n[1]}
               /^ *(Unsupported|Skipped) *:/ {s += n[1]}
               /^sanitize: [a-z]+: FAIL/ {f += 1}
               END {printf "%d passed, %d failed, %d skipped", p, f, s}' "$log")
rm -f "$log"
echo "$summary"
exit $status
