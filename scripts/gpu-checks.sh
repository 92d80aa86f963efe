#!/usr/bin/env bash
# The GPU checks of docs/gpu.md in one go, for a GPU machine that has CUDA,
# NCCL and PyTorch but no LLVM, MLIR, MPI or package registry (so no loomc,
# lit or FileCheck):
#
#   bash scripts/gpu-checks.sh prepare [PACK]       # here, after a build with CUDA:
#                                                   #   compiles the artifacts, packs them with
#                                                   #   loom-run's bundle and the GPU unit tests
#                                                   #   into PACK (default out/gpu-checks.tar.xz)
#   bash scripts/gpu-checks.sh run [PACK] [OUT]     # on the GPU machine: runs every check,
#                                                   #   logs and results under OUT
#                                                   #   (default bench/results/gpu)
#
# With the device tool: prepare here, then run
#   bash scripts/gpu-checks.sh run out/gpu-checks.tar.xz $OUT   (carry: out/gpu-checks.tar.xz)
#
# The checks are the REQUIRES: cuda-device lit tests (test/e2e/gpu/*.test),
# replayed with the same commands and helpers, the GoogleTests that need a
# GPU (LoomCudaTests Gpu.*, including the one-rank NCCL communicator, and
# LoomRuntimeTests CudaTraining.*) and bench/gpu_step.py (fp32 and bf16,
# against PyTorch eager and torch.compile), then LOOM_CUDA_PROFILE tables of
# the bench GPT's GPU time per kernel (OUT/profile-*.txt: what to speed up
# next). Each prints PASS or FAIL; the
# script goes on after a failure and exits 1 if any failed.
# GPU_CHECKS_ONLY=REGEX runs only the checks whose names match (to split
# the run over several calls, e.g. 'unit|gpt|gradcheck' and 'step-time|profile').
set -uo pipefail
cd "$(dirname "$0")/.."

# The GPT of the lit tests, and a larger one for the step-time comparison.
GPT=gpt:vocab=256,seq=64,dim=64,heads=4,layers=2,batch=8
BIG=gpt:vocab=256,seq=256,dim=256,heads=8,layers=4,batch=16
# GPT-2-124M (issue 36's model): against nanoGPT's setup, torch.compile with
# flash attention, in bf16.
GPT2=gpt:vocab=50304,seq=1024,dim=768,heads=12,layers=12,batch=8

die() { echo "gpu-checks: error: $*" >&2; exit 1; }

prepare() {
  local pack=${1:-out/gpu-checks.tar.xz} build=build
  local dir=${pack%.tar.xz}
  [[ -x $build/bin/loomc ]] || die "$build/bin/loomc is missing: build first (scripts/build.sh)"
  [[ -x $build/test/unit/runtime/LoomCudaTests ]] ||
    die "$build/test/unit/runtime/LoomCudaTests is missing: build with the CUDA toolkit installed"
  rm -rf "$dir" && mkdir -p "$dir/art" "$dir/unit"
  bash scripts/gpu-bundle.sh "$build" "$dir/bundle" || exit 1
  cp "$build"/test/unit/runtime/LoomCudaTests "$build"/test/unit/runtime/LoomRuntimeTests "$dir/unit/"
  cp -r "$build/test/unit/runtime/artifacts" "$dir/unit/"
  local loomc=$build/bin/loomc
  compile() { echo "gpu-checks: loomc $*"; "$loomc" "$@" || die "loomc $* failed"; }
  compile --model=$GPT -o "$dir/art/f32-cpu"
  compile --model=$GPT --target=cuda -o "$dir/art/f32-cuda"
  compile --model=$GPT --precision=bf16 -o "$dir/art/bf16-cpu"
  compile --model=$GPT --precision=bf16 --target=cuda -o "$dir/art/bf16-cuda"
  compile --model=gpt:vocab=32,seq=16,dim=16,heads=2,layers=1,batch=8 --dtype=f64 --target=cuda \
    -o "$dir/art/gradcheck"
  compile test/e2e/gpu/Inputs/constants.mlir -o "$dir/art/constants-cpu"
  compile test/e2e/gpu/Inputs/constants.mlir --target=cuda -o "$dir/art/constants-cuda"
  compile --model=$BIG --target=cuda -o "$dir/art/big-f32-cuda"
  compile --model=$BIG --precision=bf16 --target=cuda -o "$dir/art/big-bf16-cuda"
  compile --model=$GPT2 --precision=bf16 --target=cuda -o "$dir/art/gpt2-bf16-cuda"
  tar -C "$(dirname "$dir")" -cJf "$pack" "$(basename "$dir")" || die "cannot write $pack"
  du -h "$pack" | awk '{print "gpu-checks: " $2 " (" $1 "); run it on the GPU machine with: bash scripts/gpu-checks.sh run " $2 " OUT"}'
}

run() {
  local pack=${1:-out/gpu-checks.tar.xz} out=${2:-bench/results/gpu}
  local dir=${pack%.tar.xz}
  if [[ $pack == *.tar.xz ]]; then
    [[ -f $pack ]] || die "$pack is missing: run 'bash scripts/gpu-checks.sh prepare' on a machine with loomc"
    rm -rf "$dir" && tar -C "$(dirname "$pack")" -xJf "$pack" || die "cannot unpack $pack"
  fi
  [[ -d $dir/art ]] || die "$dir is not a prepared check directory"
  mkdir -p "$out" || die "cannot create $out"
  out=$(cd "$out" && pwd)
  local run=$dir/bundle/loom-run tmp failed=0
  tmp=$(mktemp -d) || die "mktemp failed"
  local python=${PYTHON:-python3}
  local inputs=test/e2e/gpu/Inputs
  # The unit tests find libLoomRuntime.so and their artifacts here, not in
  # the build tree they were linked in.
  LD_LIBRARY_PATH=$("$dir/bundle/libpath.sh") || die "$dir/bundle/libpath.sh failed"
  export LD_LIBRARY_PATH
  export LOOM_TEST_ARTIFACT_DIR="$dir/unit/artifacts"
  # NCCL comes with PyTorch on the GPU machine: Gpu.OneRankCollectives must
  # then run on NCCL, not on the plain-copy fallback.
  export LOOM_TEST_REQUIRE_NCCL=${LOOM_TEST_REQUIRE_NCCL:-1}

  check() { # NAME COMMAND...: runs COMMAND, logging to OUT/NAME.log
    local name=$1; shift
    [[ $name =~ ${GPU_CHECKS_ONLY:-.} ]] || return 0
    echo "== $name"; echo "== $name" >"$out/$name.log"
    if (set -x; "$@") >>"$out/$name.log" 2>&1; then
      tail -2 "$out/$name.log"; echo "PASS $name" | tee -a "$out/summary.txt"
    else
      tail -20 "$out/$name.log"; echo "FAIL $name (log: $out/$name.log)" | tee -a "$out/summary.txt"
      failed=1
    fi
  }
  : >"$out/summary.txt"
  { date -u; nvidia-smi -L; nvidia-smi; } >"$out/nvidia-smi.txt" 2>&1 ||
    echo "gpu-checks: nvidia-smi failed (see $out/nvidia-smi.txt)"
  head -2 "$out/nvidia-smi.txt"
  "$python" -c "print('the quick brown fox jumps over the lazy dog. ' * 300)" >"$tmp/corpus.txt"
  local data=(--data "text:$tmp/corpus.txt" --seed 1)

  gtests() { # BINARY FILTER: every selected test ran (none skipped for want of a GPU) and passed
    # A test that hangs (Gpu.AKernelThatNeverEndsStopsTheJob, should the
    # monitor fail) must not take the call's 10 minutes with it.
    timeout 300 "$1" --gtest_filter="$2" >"$tmp/gtest.log" 2>&1
    local rc=$?
    cat "$tmp/gtest.log"
    [[ $rc == 0 ]] && ! grep -q '^\[  SKIPPED \]' "$tmp/gtest.log" && grep -q '^\[  PASSED  \]' "$tmp/gtest.log"
  }
  check unit-gpu gtests "$dir/unit/LoomCudaTests" 'Gpu.*'
  check unit-cuda-training gtests "$dir/unit/LoomRuntimeTests" 'CudaTraining.*'

  # test/e2e/gpu/gpt-matches-cpu.test
  gpt_matches_cpu() {
    "$run" "$dir/art/f32-cpu" --steps 20 "${data[@]}" --metrics "$tmp/cpu.jsonl" &&
      "$run" "$dir/art/f32-cuda" --steps 20 "${data[@]}" --metrics "$tmp/cuda.jsonl" &&
      "$python" $inputs/compare_losses.py "$tmp/cpu.jsonl" "$tmp/cuda.jsonl" --rtol 1e-3 |
      grep '20 steps, losses within 0.001'
  }
  check gpt-f32-matches-cpu gpt_matches_cpu
  resume_exact() {
    "$run" "$dir/art/f32-cuda" --steps 20 "${data[@]}" --save "$tmp/whole" &&
      "$run" "$dir/art/f32-cuda" --steps 8 "${data[@]}" --save "$tmp/part" &&
      "$run" "$dir/art/f32-cuda" --steps 12 "${data[@]}" --load "$tmp/part" --save "$tmp/resumed" &&
      "$python" test/e2e/dist/Inputs/compare_safetensors.py --exact \
        "$tmp/whole/model.safetensors" "$tmp/resumed/model.safetensors" | grep MATCH
  }
  check gpt-resumes-exactly resume_exact
  sync_same() {
    LOOM_CUDA_SYNC=1 "$run" "$dir/art/f32-cuda" --steps 20 "${data[@]}" --metrics "$tmp/sync.jsonl" &&
      "$python" $inputs/compare_losses.py "$tmp/cuda.jsonl" "$tmp/sync.jsonl" --rtol 0 |
      grep '20 steps, losses within 0'
  }
  check gpt-sync-same-losses sync_same
  # test/e2e/train/early-frees.test on the GPU: freed device blocks filled
  # with NaNs (LOOM_ALLOC_POISON) change nothing, so no kernel reads a
  # temporary after --loom-hoist-deallocs freed it.
  poison_same() {
    LOOM_ALLOC_POISON=1 "$run" "$dir/art/f32-cuda" --steps 20 "${data[@]}" --metrics "$tmp/poison.jsonl" &&
      "$python" $inputs/compare_losses.py "$tmp/cuda.jsonl" "$tmp/poison.jsonl" --rtol 0 |
      grep '20 steps, losses within 0'
  }
  check gpt-poisoned-frees-same-losses poison_same

  # test/e2e/gpu/gpt-bf16-matches-cpu.test
  bf16_matches_cpu() {
    "$run" "$dir/art/bf16-cpu" --steps 20 "${data[@]}" --metrics "$tmp/bcpu.jsonl" &&
      "$run" "$dir/art/bf16-cuda" --steps 20 "${data[@]}" --metrics "$tmp/bcuda.jsonl" &&
      "$python" $inputs/compare_losses.py "$tmp/bcpu.jsonl" "$tmp/bcuda.jsonl" --rtol 5e-3 |
      grep '20 steps, losses within 0.005' &&
      "$python" $inputs/compare_losses.py "$tmp/cpu.jsonl" "$tmp/bcuda.jsonl" --rtol 1e-2 |
      grep '20 steps, losses within 0.01'
  }
  check gpt-bf16-matches-cpu bf16_matches_cpu

  # test/e2e/gpu/constants-match-cpu.test
  constants_match_cpu() {
    "$run" "$dir/art/constants-cpu" --steps 20 --data synthetic --seed 1 --metrics "$tmp/kcpu.jsonl" &&
      "$run" "$dir/art/constants-cuda" --steps 20 --data synthetic --seed 1 --metrics "$tmp/kcuda.jsonl" &&
      "$python" $inputs/compare_losses.py "$tmp/kcpu.jsonl" "$tmp/kcuda.jsonl" --rtol 1e-3 |
      grep '20 steps, losses within 0.001'
  }
  check constants-match-cpu constants_match_cpu

  # test/e2e/gpu/gradcheck.test
  gradcheck() {
    "$dir/bundle/bin/loom-gradcheck" "$dir/art/gradcheck" | grep 'gradcheck: PASS'
  }
  check gradcheck-f64 gradcheck

  # The step time against PyTorch eager and torch.compile (target: <= 1.0x eager).
  for a in f32-cuda bf16-cuda big-f32-cuda big-bf16-cuda; do
    check "step-time-$a" "$python" bench/gpu_step.py --artifact "$dir/art/$a" \
      --loom-run "$run" --out "$out/$a"
  done
  # GPT-2-124M: fewer steps (each is tens of milliseconds or more), against
  # the fused-attention modes only (eager without SDPA keeps 12 T x T score
  # tensors per step, which no one trains this model with).
  check step-time-gpt2-bf16-cuda "$python" bench/gpu_step.py --artifact "$dir/art/gpt2-bf16-cuda" \
    --loom-run "$run" --out "$out/gpt2-bf16-cuda" --steps 20 --warmup 5 \
    --modes eager-sdpa,compile-sdpa

  # Where the GPU time goes (LOOM_CUDA_PROFILE, docs/gpu.md): a table of
  # kernels and cuBLAS GEMMs by total time over 10 steps of the bench GPT.
  profile() { # ARTIFACT
    LOOM_CUDA_PROFILE="$out/profile-$1.txt" "$run" "$dir/art/$1" --steps 10 --data synthetic --seed 1 &&
      grep -q 'launches of' "$out/profile-$1.txt" && head -12 "$out/profile-$1.txt"
  }
  for a in big-f32-cuda big-bf16-cuda gpt2-bf16-cuda; do
    check "profile-$a" profile "$a"
  done

  rm -rf "$tmp"
  echo "gpu-checks: summary ($out/summary.txt):"
  cat "$out/summary.txt"
  return $failed
}

case ${1:-} in
prepare) shift; prepare "$@" ;;
run) shift; run "$@" ;;
*) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" | sed 's/^# \{0,1\}//'; [[ ${1:-} == -h || ${1:-} == --help ]] ;;
esac
