#!/usr/bin/env bash
# Builds the runtime with a sanitizer and runs its tests under it:
#
#   bash scripts/sanitize.sh [address|thread|all]     (default all; after scripts/build.sh)
#
# address: AddressSanitizer and UndefinedBehaviorSanitizer; thread:
# ThreadSanitizer (the runtime's communication thread, watchdog and
# background checkpoint writer). For each kind, build-sanitize-KIND/ gets a
# standalone build of the runtime (runtime/CMakeLists.txt: libLoomRuntime.so,
# its MPI and CUDA plugins, loom-run, loom-gradcheck, the runtime unit tests)
# with the sanitizer, and then
#   1. the runtime GoogleTests run on it;
#   2. the lit tests that run loom-run (test/e2e, test/tools/loom-run*) run
#      with its loom-run and loom-gradcheck (lit --param loom_run_dir=...,
#      test/lit.cfg.py); loomc and the artifacts it compiles are the main
#      build's, uninstrumented.
# Every process writes its reports under build-sanitize-KIND/logs; the
# script fails on a failed test or on any report. Open MPI is not
# instrumented: scripts/sanitize/tsan.supp says what is left out of TSan's
# reports and why; leaks are not checked where MPI is loaded (it leaks in
# the plugins it unloads, whose stacks cannot be suppressed).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$PWD
lit=/usr/lib/llvm-22/bin/lit

die() { echo "sanitize: error: $*" >&2; exit 2; }
[[ -x build/bin/loomc ]] || die "build/bin/loomc is missing: build first (scripts/build.sh)"
[[ -d build/test/e2e ]] || die "build/test is missing: build first (scripts/build.sh)"

case ${1:-all} in
address | thread) kinds=("$1") ;;
all) kinds=(address thread) ;;
*) die "unknown kind '$1' (address, thread or all)" ;;
esac

failed=0
for kind in "${kinds[@]}"; do
  dir=$root/build-sanitize-$kind
  logs=$dir/logs
  flags="-fsanitize=$kind -fno-omit-frame-pointer"
  [[ $kind == address ]] && flags="-fsanitize=address,undefined -fno-omit-frame-pointer"
  echo "sanitize: building the runtime with $flags in $dir"
  built=$SECONDS
  mkdir -p "$dir"
  launcher=()
  command -v ccache >/dev/null &&
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # -O1 and line tables only: the reports keep their file:line stacks, and
  # the build takes half the time of -O2 -g (ASan and UBSan's checks make
  # the optimizer's work large).
  if ! cmake -S runtime -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    "${launcher[@]}" -DLOOM_RUNTIME_FUZZ=OFF \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
    >"$dir/configure.log" 2>&1 || ! cmake --build "$dir" >"$dir/build.log" 2>&1; then
    tail -30 "$dir/configure.log" "$dir/build.log" 2>/dev/null
    echo "sanitize: $kind: FAIL the build (logs: $dir/configure.log, $dir/build.log)"
    failed=1
    continue
  fi
  echo "sanitize: $kind: built in $((SECONDS - built)) s"
  rm -rf "$logs" && mkdir -p "$logs"

  # 1. The runtime's unit tests. Death tests re-run the binary rather than
  # fork a process that has threads (which TSan does not support).
  unit=$dir/test/unit/runtime
  gtest() { # NAME ENV... -- BINARY ARGS...: runs one gtest binary
    local name=$1; shift
    local env=()
    while [[ $1 != -- ]]; do env+=("$1"); shift; done
    shift
    echo "sanitize: $kind: $name"
    if ! env "${env[@]}" "$@" --gtest_death_test_style=threadsafe \
      >"$dir/$name.log" 2>&1; then
      tail -30 "$dir/$name.log"
      echo "sanitize: $kind: FAIL $name (log: $dir/$name.log)"
      failed=1
    else
      grep -E '^\[  PASSED  \]' "$dir/$name.log"
    fi
  }
  # The options of every run: reports to files under $logs, and what
  # ThreadSanitizer leaves out. Leaks are checked only where MPI is not
  # loaded.
  asan=verify_asan_link_order=0:log_path=$logs/asan
  ubsan=UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan
  tsan=suppressions=$root/scripts/sanitize/tsan.supp:ignore_noninstrumented_modules=1
  tsan=TSAN_OPTIONS=$tsan:second_deadlock_stack=1:log_path=$logs/tsan
  if [[ $kind == address ]]; then
    gtest unit-runtime "ASAN_OPTIONS=detect_leaks=1:$asan" "$ubsan" -- \
      "$unit/LoomRuntimeTests" --gtest_filter='-MpiCommunicator.*'
    gtest unit-runtime-mpi "ASAN_OPTIONS=detect_leaks=0:$asan" "$ubsan" -- \
      "$unit/LoomRuntimeTests" --gtest_filter='MpiCommunicator.*'
    gtest unit-cuda "ASAN_OPTIONS=detect_leaks=1:$asan" "$ubsan" -- \
      "$unit/LoomCudaTests" --gtest_filter='-NcclJoin.*'
    gtest unit-cuda-mpi "ASAN_OPTIONS=detect_leaks=0:$asan" "$ubsan" -- \
      "$unit/LoomCudaTests" --gtest_filter='NcclJoin.*'
    litenv=("ASAN_OPTIONS=detect_leaks=0:$asan" "$ubsan")
  else
    gtest unit-runtime "$tsan" -- "$unit/LoomRuntimeTests"
    gtest unit-cuda "$tsan" -- "$unit/LoomCudaTests"
    litenv=("$tsan")
  fi

  # 2. The lit tests that run loom-run, with this build's (test/lit.cfg.py
  # passes the options above on to them).
  # ThreadSanitizer leaves out the gradient checks (test/e2e/gradcheck):
  # one thread computing finite differences, nothing for it to find.
  tests=(build/test/e2e build/test/tools/loom-run build/test/tools/loom-run-calibrate.test)
  [[ $kind == thread ]] &&
    tests=(build/test/e2e/{co2,dist,overlap,train} "${tests[@]:1}")
  # Both leave out the tests whose subject is the compiled code's numbers,
  # not the runtime: the GPU kernels run as CPU loops, the placement of
  # frees, the comparisons with PyTorch and the gradients of single ops
  # (gpt-model.test and mlp-model.test still run loom-gradcheck). Their
  # runtime calls are those of the training tests that do run, and they
  # were a third of this step's time.
  skip='e2e/train/(gpu-kernels-on-cpu|gpu-loops-on-cpu|early-frees)\.test'
  skip+='|e2e/torch/|e2e/gradcheck/.*\.mlir$'
  echo "sanitize: $kind: lit tests with $dir/tools/loom-run/loom-run"
  env "${litenv[@]}" "$lit" -sv --param loom_run_dir="$dir" \
    --param sanitizer="$kind" --filter-out "$skip" "${tests[@]}" || failed=1

  reports=$(find "$logs" -type f | sort)
  if [[ -n $reports ]]; then
    echo "sanitize: $kind: FAIL the sanitizer reported (one file per process):"
    for f in $reports; do
      echo "== $f"
      head -40 "$f"
    done
    failed=1
  else
    echo "sanitize: $kind: no sanitizer reports"
  fi
done
exit $failed
