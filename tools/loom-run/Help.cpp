//===- Help.cpp - loom-run --help -------------------------------*- C++ -*-===//
//
// The text `loom-run --help` prints: every flag, and how ranks, metrics,
// calibration, communication, the environment, memory, stopping and the exit
// status work. Kept apart from the main, which it would double in length.
//
//===----------------------------------------------------------------------===//

#include "Help.h"

namespace loom::run {

const char *const kHelp = R"(usage: loom-run ARTIFACT_DIR --steps N [options]
       loom-run ARTIFACT_DIR --eval [--load PATH] [--data SRC]
                [--eval-batches N] [--ranks N] [--metrics FILE]
       loom-run --calibrate FILE [--ranks N] [--threads N]
                [--collective-timeout S] [--check-collectives]
       loom-run --hang-report DIR

Trains the model compiled by `loomc ... -o ARTIFACT_DIR`: calls its
train_step N times, printing progress to stderr and the final loss to stdout.
With --calibrate it trains nothing and instead measures the machine for the
compiler's cost model (see "calibration" below).

options:
  --steps N         number of training steps to run (required; after --load
                    of a checkpoint, N more steps)
  --data SRC        where batches come from (default: synthetic):
                      synthetic     seeded random data (classify: labels from
                                    a random teacher network; lm: random tokens)
                      text:PATH     the file's bytes are tokens (vocab >= 256)
                      tokens:PATH   little-endian uint16 tokens (nanoGPT .bin)
                      docs:PATH     documents: the files of a directory, or
                                    the "text" fields of a JSONL file, packed
                                    into rows (a model compiled with
                                    gpt:...,docs=1; docs/sequences.md)
                      synthetic-docs[:median=N,sigma=S,count=N]
                                    documents of lognormal lengths
  --shuffle         draw token windows at random (seeded) instead of reading
                    the file in order (text:, tokens: and docs: data; synthetic
                    rows are random already: a warning says so)
  --seed S          seed for parameter init, synthetic data and shuffling
                    (default: 0; on resume, the checkpoint's seed)
  --device D        cpu or cuda: where to train (default: the target the
                    artifact was compiled for, loomc --target); an artifact
                    runs only on its own target, so another value is an error.
                    cuda trains on the rank's GPU (its local rank modulo the
                    GPUs it sees)
  --threads N       OpenBLAS threads per rank (default: 1; at most 1024, and
                    a warning says when OpenBLAS runs fewer)
  --log-every K     progress line every K steps, plus the first and last
                    (default: 10; 0: first and last only)
  --metrics FILE    write one JSON object per step and a final summary
                    object to FILE (JSON lines); see "metrics" below
  --trace FILE      write a Chrome trace (JSON; open in ui.perfetto.dev or
                    chrome://tracing) of every rank: pid = rank, lane
                    "compute" (each step, and each wait blocked on a
                    collective) and lane "comm" (each collective, with its
                    bytes and op, as the communication thread runs it)
  --load PATH       a checkpoint directory: resume params, optimizer state,
                    step and data position; a .safetensors file: load the
                    weights only (fresh optimizer, step 0)
  --save PATH       save a checkpoint directory at the end (atomically)
  --save-every K    also save every K steps (needs --save)
  --save-async      rank 0 (with CO2: every rank, its own part) copies the
                    model and optimizer state when a save is due and writes
                    the copy while training goes on (the next save, and the
                    end of the run, wait for it; the previous checkpoint
                    stays the latest until it is done). Keeps a second host
                    copy of the state from the first save on
  --ranks N         start N ranks on this machine (data parallel) by running
                    the MPI launcher (mpirun) on loom-run itself; the artifact
                    must be compiled for N ranks (loomc --dp=N)
  --max-restarts R  with --ranks and --save: when a rank crashes or is killed
                    (not when the ranks stop on an error they agree on),
                    start the job again from its last checkpoint, at most R
                    times, with the steps left (resume is bit-exact: the
                    result is the uninterrupted run's). A failed attempt's
                    --metrics files are kept as FILE.attempt<k>
  --stop-timeout S  with --ranks: after a first Ctrl-C or SIGTERM, how long
                    the ranks have to stop and save (see "stopping" below)
                    before they are stopped outright (default: 120; 0: no
                    limit)
  --offload-bandwidth GBPS
                    with a model compiled with offloaded parameters (loomc
                    --zo=mezo:offload=1): the bandwidth of the modelled link
                    between host and device memory, in GB/s each way
                    (default: 0, no model: transfers take the time of a
                    memcpy). A step's uploads and write-backs then arrive
                    when such a link would deliver them (docs/zo.md)
  --collective-timeout S
                    stop the job when one collective has waited S seconds for
                    the other ranks (default: 60; 0: wait forever); on GPUs
                    also when NCCL's setup of the ranks takes longer, or a
                    collective has not finished S seconds after it was
                    issued. A rank that dies on this machine is noticed
                    within seconds.
                    With --ranks, a note then names the ranks that did not
                    reach the collective, or where their collectives differ
                    (under mpirun/srun: set LOOM_RUN_FLIGHT_DIR=DIR on every
                    rank, then run loom-run --hang-report DIR)
  --hang-report DIR what the flight records in DIR say about a hung job:
                    which ranks did not reach the collective the others
                    wait in, where the ranks' collectives first differ, and
                    each rank's last collectives (a rank whose collective
                    times out writes DIR/rank<R>.json when LOOM_RUN_FLIGHT_DIR
                    names DIR; loom-run --ranks does this by itself)
  --check-collectives
                    debug mode: before each collective the ranks compare
                    what they are about to issue (kind, count, dtype,
                    reduction or root) and stop the job at the first that
                    differs, naming what each rank issued (one extra small
                    all-gather per collective; host collectives only). Every
                    rank must be given it, or none
  --log-plan        a model compiled with docs=1: rank 0 prints each step's
                    plan of its documents on the ranks (docs/sequences.md;
                    executed when compiled with --partition-sequences,
                    reported otherwise)
  --async-collectives auto|on|off
                    where an --overlap artifact's asynchronous collectives
                    run: on, on the communication thread, overlapping the
                    compute; off, at once, as synchronous collectives; auto
                    (default, several ranks), steps 3-6 on and 7-10 off,
                    then the faster of the two for the rest of the run
                    (printed as "collectives: ..."). The values are the same
                    either way. Every rank must be given the same
  --reduce-order ORDER
                    how the ranks' floating-point values are added in
                    all-reduces and reduce-scatters: mpi (default: the MPI
                    library's algorithm, which adds in another order for a
                    reduce-scatter than for an all-reduce above 2 ranks) or
                    rank (((x0 + x1) + x2) + ... in every collective, so a
                    ZeRO job's parameters equal plain data parallelism's
                    bit for bit; as many bytes per link as a ring). Every
                    rank must be given the same; host collectives only
  --eval            evaluate instead of training: the mean of the artifact's
                    loss over batches read in order from the start of --data
                    (e.g. held-out text), for the weights of --load (a
                    checkpoint directory's model.safetensors: for a CO2
                    checkpoint, the mean of the ranks' models). Prints
                    `eval loss L over N batches (T tokens)`; --metrics gets
                    {"eval": {...}}
  --eval-batches N  global batches one evaluation averages (--eval,
                    --eval-data; default, and at most: one pass over
                    text/tokens data; needed for synthetic)
  --eval-data SRC   while training, also evaluate the loss on SRC (held-out
                    data, read in order) after the last step and every
                    --eval-every K steps; printed as `step S: eval loss L`,
                    written to --metrics as {"eval": {"step": S, ...}}. With
                    CO2 the round in flight is finished first, and at an
                    outer step (K a multiple of local_steps) every rank
                    holds the new anchor
  --eval-every K    with --eval-data: evaluate every K steps (default: only
                    after the last step)
  --calibrate FILE  measure the machine instead of training and write FILE
                    for `loomc --calibration=FILE` (no ARTIFACT_DIR, no
                    --steps or other training options)
  -h, --help        show this help
  --version         show Loom's version and the commit it was built from

ranks:
  `loom-run DIR --ranks N` starts N local ranks. Under an existing launcher
  (`mpirun -np N loom-run DIR ...`, also across machines with a hostfile, or
  srun) loom-run joins that job instead. Rank r trains on rows [r*B, (r+1)*B)
  of every global batch of N*B rows (B: the artifact's batch), so N ranks see
  the same data as one rank with batch N*B. Rank 0 prints progress and the
  result and writes checkpoints (the ranks' models are identical, which each
  save verifies); every rank reads and verifies a checkpoint it loads. A
  checkpoint resumes on another rank count too: the data goes on at the
  first global batch of the new job that starts at or after the rows
  already consumed (a note says where). Not a CO2 checkpoint: its ranks hold
  models of their own; load its model.safetensors to start elsewhere.
  If a rank dies or fails, every rank stops and loom-run exits non-zero with
  a line naming the rank.

metrics:
  Every line has "rank". With N ranks rank 0 writes FILE and rank r > 0
  writes FILE.rank<r>. Per step: step, rank, loss (mean over ranks: the loss
  of the global batch), rank_loss (this rank's), lr, grad_norm, step_time_s,
  comm_time_s (time inside the step's collectives on this rank),
  exposed_comm_s (time the step was blocked waiting for collectives),
  tokens_per_s (global batch tokens per second of this rank's step time;
  rows for a classify model);
  last line: {"summary": {...}}, which adds comm_hidden_fraction
  (1 - exposed_comm_s / comm_time_s, in [0, 1]), peak_temp_bytes,
  peak_device_bytes (a cuda artifact), param_bytes, grad_bytes,
  optimizer_state_bytes and peak_rss_bytes (see "memory"). Evaluations (--eval,
  --eval-data) are {"eval": {"step" (during training), "rank", "loss" (mean
  over batches and ranks), "batches", "tokens"}}.
  CO2 artifacts (loomc --co2): loss is the rank's own (ranks do not talk
  during a round); at the outer step ending round k > 1, round_loss is round
  k-1's mean over ranks and steps; the final loss is the last round's
  (docs/co2.md).

calibration:
  `loom-run --calibrate FILE` measures what loomc's cost model (overlap
  scheduling, bucketing) otherwise takes from `loomc --link=...` or guesses:
  the single-precision GEMM rate of the slowest rank (--threads BLAS threads
  each) and, with N > 1 ranks, the all-reduce latency and bandwidth between
  them. Run it on the ranks and machines you will train on: `--ranks N`
  here, or under mpirun/srun like training. It takes a few seconds (under
  30 s on a 10 Mbit/s link). Rank 0 writes FILE atomically, as JSON
  ("format": "loom-calibration", "version": 1, ranks, backend, threads,
  gemm_gflops, link_gbps and link_latency_us when N > 1, allreduce_samples,
  host), and prints a summary, e.g. `calibrated 2 ranks: GEMM 38.1 GFLOP/s,
  all-reduce 0.93 Gbit/s, latency 61 us -> FILE`. Then compile with
  `loomc ... --calibration=FILE`.

communication:
  With N > 1 ranks the collectives of compiled code run on a communication
  thread per rank, in issue order; code compiled with `loomc --overlap`
  starts them asynchronously and waits only where it needs the result, so
  they overlap with compute. Rank 0 prints, after the final loss, e.g.
    communication 12.3 ms/step, 84% hidden, exposed 2.0 ms/step
  (time in collectives, the share hidden behind compute, time blocked).
  --collective-timeout applies to each collective the thread runs.
  A job that seems slow rather than hung: `kill -USR1` one rank, or the
  loom-run --ranks process (or mpirun), which passes it on to every rank;
  each prints the collective it waits in, if any, and its last ones, and
  the job goes on.

environment:
  LOOM_MPIEXEC      the MPI launcher --ranks runs (default: the mpiexec of the
                    MPI loom-run was built with)
  LOOM_MPI_PLUGIN, LOOM_CUDA_PLUGIN
                    the runtime's MPI and CUDA plugins (default:
                    libLoomMpi.so and libLoomCuda.so beside libLoomRuntime.so)
  LOOM_NCCL_LIBRARY the libnccl.so.2 for GPU collectives (default: searched;
                    see docs/gpu.md)
  LOOM_CUDA_SYNC=1  wait for the GPU after every kernel, GEMM and collective,
                    so that an error names the one that failed (slow)
  LOOM_CUDA_TF32=1  let FP32 GEMMs use TF32 tensor cores (faster, about 3
                    decimal digits; default: full FP32)
  LOOM_GPU_WAIT_LIMIT_S
                    stop the job when one wait for the GPU lasts longer (a
                    kernel that never ends, a hung driver; default: 600, or
                    --collective-timeout + 60 if longer, and none with
                    --collective-timeout 0 on several ranks; 0: no limit)
  LOOM_MPI_PIECE_BYTES
                    the size of the pieces an MPI all-reduce or
                    reduce-scatter is split into, one after the other
                    (default: 8388608; 0: whole messages); the same on every
                    rank (docs/overlap.md)
  LOOM_MPI_HIERARCHICAL=1
                    all-reduce by host when the job spans several hosts
                    with several ranks on one: a reduce inside each host,
                    an all-reduce between the hosts' first ranks (over all
                    their NICs), a broadcast back (default: MPI's flat
                    algorithms; other sums' order, so other bits); the same
                    on every rank
  LOOM_ABORT_DEADLINE_S
                    seconds a rank that stops the job waits for the MPI
                    library's abort to end it before it exits by itself
                    (default: 30; from 0.1 to 86400, checked at start-up)
  LOOM_ALLOC_POISON=1
                    fill the compiled code's temporaries with NaNs when
                    allocated and when freed, so that reading one after its
                    free (a compiler bug) turns the loss NaN (on a GPU:
                    every block of the device pool, on the compute stream)

memory:
  After the final loss rank 0 prints the most memory it used at once, e.g.
    memory: temporaries peak 410.8 MiB
  (a cuda artifact: "memory: GPU peak ... MiB in use", parameters and
  state included), then what the model takes on a rank and the process's
  peak resident memory:
    memory per rank: parameters 3.2 MiB, gradients 3.2 MiB (temporaries
    of the step), optimizer state 6.4 MiB; process peak 475.0 MiB resident
  --metrics records them in every rank's summary as peak_temp_bytes,
  peak_device_bytes, param_bytes, grad_bytes, optimizer_state_bytes and
  peak_rss_bytes. Compiled code frees each temporary after its last use
  (docs/pipeline.md).

stopping:
  Ctrl-C (SIGINT) or SIGTERM to loom-run, alone or with --ranks, stops
  training early without losing it: the ranks finish the step in progress,
  agree on the step to stop after (the request rides on the step's loss
  reduction; with CO2 on a small all-reduce beside each round's, so at most
  two rounds later), save there with --save, print `stopped K steps early;
  to go on: --load PATH --steps K` and exit 128+N (130 for Ctrl-C). The
  metrics summary says "stopped_by". A second Ctrl-C or SIGTERM stops at
  once, as does --stop-timeout. Under mpirun or srun, send SIGUSR2 instead
  (`kill -USR2` mpirun, which passes it on, or `srun --signal=USR2@60`;
  their own SIGTERM is followed by SIGKILL too soon to save): the ranks
  stop the same way and exit 0.

exit status:
  0 success; 1 an error (one `loom-run: error:` line says which); 2 a usage
  error; 3 a rank stopped the job on an error a restart would meet again
  (its own non-finite loss under CO2; --max-restarts does not restart it);
  128+N the job was killed by signal N, or stopped on it as asked (see
  "stopping"). A job started with --ranks exits with its launcher's status.

examples:
  loom-run out/ --steps 1000 --data text:corpus.txt --metrics m.jsonl \
      --save ckpt --save-every 100
  loom-run out/ --steps 500 --data text:corpus.txt --load ckpt --save ckpt
  loomc --model=gpt:... --dp=4 -o out4/ && loom-run out4/ --ranks 4 --steps 100
  loom-run --calibrate cal.json --ranks 2 &&
      loomc --model=gpt:... --dp=2 --calibration=cal.json -o out2/
)";

} // namespace loom::run
