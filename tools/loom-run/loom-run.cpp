//===- loom-run.cpp - Train a compiled Loom artifact ------------*- C++ -*-===//
//
// Thin main: parses flags into TrainOptions and hands them to the runtime's
// Trainer, or with --calibrate measures the machine for loomc's cost model
// (Calibrate.h) instead; either mode runs in one of three roles:
//   - alone (no launcher in the environment, no --ranks): one process;
//   - launcher (--ranks N, N > 1): checks what it can, then runs mpiexec on
//     itself without --ranks and reports how the job ended;
//   - rank (started by mpirun/srun/..., or by the launcher): joins the MPI
//     job and trains its slice (or takes part in the measurements).
// A cuda artifact (loomc --target=cuda) trains on this rank's GPU; the
// runtime loads its CUDA plugin for it (docs/gpu.md), and --device only
// states or checks the target.
// Every failure is one line `loom-run: error: ...` and a non-zero exit status
// (2 for command-line mistakes, 1 for everything else, or the status of a
// failed job).
//
//===----------------------------------------------------------------------===//

#include "loom/Version.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Blas.h"
#include "loom/runtime/Calibrate.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Data.h"
#include "loom/runtime/Flags.h"
#include "loom/runtime/HangReport.h"
#include "loom/runtime/Launcher.h"
#include "loom/runtime/Manifest.h"
#include "loom/runtime/StopRequest.h"
#include "loom/runtime/Target.h"
#include "loom/runtime/Trainer.h"
#include "loom/runtime/World.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <unistd.h>

using namespace loom::rt;

static const char *kHelp = R"(usage: loom-run ARTIFACT_DIR --steps N [options]
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
  --shuffle         draw token windows at random (seeded) instead of reading
                    the file in order (text: and tokens: data; synthetic
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
  (1 - exposed_comm_s / comm_time_s, in [0, 1]), peak_temp_bytes and, for
  a cuda artifact, peak_device_bytes (see "memory"). Evaluations (--eval,
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
  state included); --metrics records it as peak_temp_bytes and
  peak_device_bytes. Compiled code frees each temporary after its last use
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

namespace {

/// The most --threads a rank takes (OpenBLAS's own limit, which it applies
/// silently, is lower on most builds: a warning says so).
constexpr int64_t kMaxThreads = 1024;

struct Command {
  TrainOptions options;
  std::string artifactDir;
  /// --calibrate FILE; "" when training.
  std::string calibratePath;
  /// --hang-report DIR; "" when training.
  std::string hangReportDir;
  /// --eval: evaluate the loss instead of training.
  bool eval = false;
  /// Training-only flags given (refused with --eval).
  std::vector<std::string> trainOnly;
  int64_t threads = 1;
  int64_t ranks = 0; // 0: not given
  int64_t maxRestarts = 0;
  /// --stop-timeout: seconds the launcher's ranks have to stop on request.
  double stopTimeout = 120;
  bool stopTimeoutGiven = false;
  /// --device; empty: the artifact's target.
  std::optional<Target> device;
  double collectiveTimeout = 60;
  bool checkCollectives = false;
  /// argv without --ranks and its value, for the ranks the launcher starts.
  std::vector<std::string> rankArgs;
};

Command parse(int argc, char **argv) {
  Command command;
  TrainOptions &options = command.options;
  std::string value;
  bool stepsGiven = false;
  // The first training-only flag seen, which --calibrate refuses.
  std::string trainingFlag;
  // The first argument other than --hang-report, which it refuses.
  std::string otherArgument;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const size_t start = args.consumed();
    if (args.flag("-h") || args.flag("--help")) {
      std::cout << kHelp;
      std::exit(0);
    }
    if (args.flag("--version")) {
      std::cout << "loom-run: " LOOM_VERSION_STRING "\n";
      std::exit(0);
    }
    if (args.value("--ranks", value)) {
      // The ranks run the same command without it.
      command.ranks = parseIntFlag("--ranks", value, 1);
      continue;
    }
    if (args.value("--max-restarts", value)) {
      // The launcher's alone, like --ranks.
      command.maxRestarts = parseIntFlag("--max-restarts", value, 0);
      continue;
    }
    if (args.value("--stop-timeout", value)) {
      command.stopTimeout =
          parsePositiveFlag("--stop-timeout", value, /*allowZero=*/true);
      // The timer takes whole seconds in a time_t; 0 already means none.
      if (command.stopTimeout > 1e6)
        throw UsageError("--stop-timeout: expected at most 1000000 seconds "
                         "(0: no limit), got " +
                         value);
      command.stopTimeoutGiven = true;
      continue;
    }
    const std::string arg = args.current();
    if (args.value("--hang-report", value)) {
      if (value.empty())
        throw UsageError("--hang-report: expected a DIR of flight records");
      command.hangReportDir = value;
    } else if (args.value("--calibrate", value)) {
      if (value.empty())
        throw UsageError("--calibrate: expected a FILE to write");
      command.calibratePath = value;
    } else if (args.flag("--eval")) {
      command.eval = true;
    } else if (args.value("--eval-data", value)) {
      if (std::string problem = dataSpecProblem(value); !problem.empty())
        throw UsageError("--eval-data: " + problem);
      options.evalData = value;
    } else if (args.value("--eval-every", value)) {
      options.evalEvery = parseIntFlag("--eval-every", value, 1);
    } else if (args.value("--eval-batches", value)) {
      options.evalBatches = parseIntFlag("--eval-batches", value, 1);
    } else if (args.value("--steps", value)) {
      options.steps = parseIntFlag("--steps", value, 0);
      stepsGiven = true;
    } else if (args.value("--data", value)) {
      // Its form is the command line's (exit status 2); a file it names
      // that cannot be read is bad input (1), found when it is opened.
      if (std::string problem = dataSpecProblem(value); !problem.empty())
        throw UsageError(problem);
      options.data = value;
    } else if (args.flag("--shuffle")) {
      options.shuffle = true;
    } else if (args.value("--seed", value)) {
      options.seed = parseSeedFlag("--seed", value);
      options.seedGiven = true;
    } else if (args.value("--device", value)) {
      command.device = parseTargetName(value);
      if (!command.device)
        throw UsageError("--device: expected cpu or cuda, got '" + value + "'");
    } else if (args.value("--threads", value)) {
      command.threads = parseIntFlag("--threads", value, 1);
      // OpenBLAS allocates per thread; no machine has this many cores.
      if (command.threads > kMaxThreads)
        throw UsageError("--threads: expected at most " +
                         std::to_string(kMaxThreads) +
                         " BLAS threads per rank, got " + value);
    } else if (args.value("--log-every", value)) {
      options.logEvery = parseIntFlag("--log-every", value, 0);
    } else if (args.value("--metrics", value)) {
      options.metricsPath = value;
    } else if (args.value("--trace", value)) {
      options.tracePath = value;
    } else if (args.value("--load", value)) {
      options.loadPath = value;
    } else if (args.value("--save", value)) {
      options.savePath = value;
    } else if (args.flag("--save-async")) {
      options.saveAsync = true;
    } else if (args.value("--save-every", value)) {
      options.saveEvery = parseIntFlag("--save-every", value, 1);
    } else if (args.flag("--check-collectives")) {
      command.checkCollectives = true;
    } else if (args.value("--collective-timeout", value)) {
      command.collectiveTimeout =
          parsePositiveFlag("--collective-timeout", value, /*allowZero=*/true);
    } else if (args.current().size() > 1 && args.current()[0] == '-') {
      throw UsageError("unknown option '" + args.current() + "'");
    } else if (command.artifactDir.empty()) {
      command.artifactDir = args.take();
    } else {
      throw UsageError("unexpected argument '" + args.current() +
                       "' (only one ARTIFACT_DIR)");
    }
    const std::string name = arg.substr(0, arg.find('='));
    if (otherArgument.empty() && name != "--hang-report")
      otherArgument = arg;
    for (const char *only :
         {"--save", "--save-every", "--save-async", "--shuffle", "--trace",
          "--eval-data", "--eval-every"})
      if (name == only)
        command.trainOnly.push_back(name);
    if (trainingFlag.empty() && name.rfind("--", 0) == 0 &&
        name != "--calibrate" && name != "--threads" &&
        name != "--collective-timeout" && name != "--check-collectives")
      trainingFlag = name;
    command.rankArgs.insert(command.rankArgs.end(), argv + 1 + start,
                            argv + 1 + args.consumed());
  }
  if (command.maxRestarts > 0) {
    if (command.ranks < 2)
      throw UsageError("--max-restarts needs --ranks N (N > 1): the launcher "
                       "it starts restarts the job (under mpirun or srun, "
                       "use their restart options)");
    if (!command.calibratePath.empty() || command.eval)
      throw UsageError("--max-restarts is for training");
    if (options.savePath.empty())
      throw UsageError("--max-restarts needs --save PATH (and --save-every "
                       "K): a restart resumes from the job's last "
                       "checkpoint");
  }
  if (command.stopTimeoutGiven && command.ranks < 2)
    throw UsageError("--stop-timeout needs --ranks N (N > 1): it is how long "
                     "the launcher waits for its ranks to stop on request "
                     "(alone, a second Ctrl-C stops at once)");
  if (command.stopTimeoutGiven &&
      (!command.calibratePath.empty() || command.eval))
    throw UsageError("--stop-timeout is for training");
  if (!command.hangReportDir.empty()) {
    if (!otherArgument.empty())
      throw UsageError("--hang-report DIR takes no other arguments (got '" +
                       otherArgument + "')");
    return command;
  }
  if (!command.calibratePath.empty()) {
    const char *separate =
        " are separate modes: calibrate first (loom-run --calibrate FILE), "
        "compile with loomc --calibration=FILE, then train (loom-run "
        "ARTIFACT_DIR --steps N)";
    if (!command.artifactDir.empty())
      throw UsageError("--calibrate and ARTIFACT_DIR" + std::string(separate));
    if (stepsGiven)
      throw UsageError("--calibrate and --steps" + std::string(separate));
    if (!trainingFlag.empty())
      throw UsageError("--calibrate takes no " + trainingFlag +
                       " (a training option); only --ranks, --threads, "
                       "--collective-timeout and --check-collectives apply "
                       "to it");
    return command;
  }
  if (command.artifactDir.empty())
    throw UsageError("missing ARTIFACT_DIR");
  if (command.eval) {
    if (stepsGiven)
      throw UsageError("--eval runs no steps; use --eval-batches N for how "
                       "many batches to evaluate");
    if (!command.trainOnly.empty())
      throw UsageError("--eval takes no " + command.trainOnly.front() +
                       " (a training option)");
    return command;
  }
  if (options.evalBatches > 0 && options.evalData.empty())
    throw UsageError("--eval-batches needs --eval or --eval-data");
  if (options.evalEvery > 0 && options.evalData.empty())
    throw UsageError("--eval-every needs --eval-data SRC");
  if (!stepsGiven)
    throw UsageError("missing --steps N");
  if (options.saveEvery > 0 && options.savePath.empty())
    throw UsageError("--save-every needs --save PATH");
  if (options.saveAsync && options.savePath.empty())
    throw UsageError("--save-async needs --save PATH");
  return command;
}

/// The path of this executable, for the ranks the launcher starts.
std::string selfPath(const char *argv0) {
  char buffer[4096];
  ssize_t length = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (length <= 0)
    return argv0;
  return std::string(buffer, static_cast<size_t>(length));
}

int launch(const Command &command, const char *argv0) {
  // Calibration has no artifact: any rank count will do.
  if (command.calibratePath.empty()) {
    Manifest manifest = readManifest(command.artifactDir);
    checkJobMatchesMesh(manifest.mesh, command.ranks, /*external=*/false);
  }
  LaunchOptions launch;
  launch.ranks = static_cast<int>(command.ranks);
  launch.args.push_back(selfPath(argv0));
  launch.args.insert(launch.args.end(), command.rankArgs.begin(),
                     command.rankArgs.end());
  launch.stopOnRequest = command.calibratePath.empty() && !command.eval;
  launch.stopTimeout = command.stopTimeout;
  RestartOptions restarts;
  restarts.maxRestarts = command.maxRestarts;
  restarts.savePath = command.options.savePath;
  restarts.loadPath = command.options.loadPath;
  restarts.steps = command.options.steps;
  restarts.metricsPath = command.options.metricsPath;
  return launchWithRestarts(launch, restarts);
}

/// The rank a launcher gave this process, before MPI is initialised; -1 if
/// none. Used to print command-line errors once, not once per rank.
int launcherRank() {
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char *value = std::getenv(var); value && *value)
      return std::atoi(value);
  return -1;
}

/// Runs `body` as one rank of the job `job` (or alone), turning its failures
/// into one message for the whole job.
int runAsRank(const Command &command, const JobInfo &job,
              const std::function<void(Communicator &)> &body) {
  if (command.ranks > 0 && job.announcedSize > 0 &&
      command.ranks != job.announcedSize)
    throw UsageError("--ranks " + std::to_string(command.ranks) +
                     " but the launcher started " +
                     std::to_string(job.announcedSize) +
                     " ranks; leave --ranks out under mpirun/srun");
  setBlasThreads(static_cast<int>(command.threads));
  if (const int used = getBlasThreads();
      used != command.threads && launcherRank() <= 0)
    std::cerr << "loom-run: warning: --threads " << command.threads
              << ": OpenBLAS runs at most " << used << " threads here; using "
              << used << std::endl;
  WorldOptions world;
  world.collectiveTimeout = command.collectiveTimeout;
  std::unique_ptr<Communicator> comm = connectWorld(job, world);
  try {
    if (comm->size() > 1) {
      // The check is itself a collective, so a rank that checks and one
      // that does not would pair the check with a collective of the job.
      agreeOnSettings(*comm,
                      {{"--check-collectives",
                        command.checkCollectives ? "given" : "not given"}});
      if (command.checkCollectives)
        comm = checkEveryCollective(std::move(comm));
    }
    body(*comm);
  } catch (const JobError &e) {
    // Printed while MPI is up, and no rank exits before it is out: a
    // launcher stops the job as soon as any rank exits non-zero, which
    // could otherwise kill the reporting rank before it prints.
    std::cerr << "loom-run: error: " << e.what() << std::endl;
    comm->barrier();
    throw SilentError();
  } catch (const SilentError &) {
    comm->barrier();
    throw;
  } catch (const std::exception &e) {
    // A failure of this rank alone: its peers may be waiting for it in a
    // collective, so the whole job must stop.
    if (comm->size() > 1)
      abortJob(e.what(), comm.get());
    throw;
  }
  return 0;
}

/// Trains as one rank of the job `job` (or alone).
int train(Command &command, const JobInfo &job) {
  command.options.externalLauncher =
      job.underLauncher() && !std::getenv("LOOM_RUN_LAUNCHED");
  // Before MPI starts: a SIGUSR2 that came first would end the rank.
  if (!command.eval)
    installStopHandlers(/*interrupts=*/!job.underLauncher());
  int stoppedBy = 0;
  int status = runAsRank(command, job, [&](Communicator &comm) {
    std::unique_ptr<Artifact> artifact;
    std::string failure;
    try {
      // An explicit --device cuda is checked first: on a machine without a
      // GPU that is the thing to fix, whatever the artifact.
      if (command.device == Target::CUDA) {
        try {
          requireTarget(Target::CUDA);
        } catch (const Error &e) {
          throw Error(std::string("--device cuda: ") + e.what());
        }
      }
      ArtifactOptions options;
      options.target = command.device;
      artifact = Artifact::load(command.artifactDir, options);
    } catch (const std::exception &e) {
      failure = e.what();
    }
    agreeOnFailure(comm, failure);
    if (artifact->onDevice() && comm.isRoot())
      std::cerr << "device: " << describeTarget(Target::CUDA)
                << (comm.size() > 1 ? " (rank 0)" : "") << std::endl;
    Trainer trainer(*artifact, command.options, comm, std::cerr, std::cout);
    if (command.eval) {
      trainer.evaluate();
      return;
    }
    TrainResult result = trainer.run();
    if (result.stopped)
      stoppedBy = result.stopSignal;
  });
  // Stopped on request, the whole job in this process: what the signal
  // would have given, after the save. Ranks under a launcher exit 0 (one
  // that exits otherwise has mpirun stop the others before they are done);
  // `loom-run --ranks` exits with the status of its own signal.
  if (status == 0 && stoppedBy && !job.underLauncher())
    return 128 + stoppedBy;
  return status;
}

/// Measures the machine as one rank of the job `job` (or alone); rank 0
/// writes the calibration file.
int calibrateMachine(const Command &command, const JobInfo &job) {
  const std::string &path = command.calibratePath;
  return runAsRank(command, job, [&](Communicator &comm) {
    // Only rank 0 writes, but every rank must stop if it cannot; and a bad
    // path is better found before the measurements than after them.
    auto rootAttempt = [&](const std::function<void()> &fn) {
      std::string failure;
      if (comm.isRoot()) {
        try {
          fn();
        } catch (const std::exception &e) {
          failure = e.what();
        }
      }
      agreeOnFailure(comm, failure);
    };
    rootAttempt([&] { checkCalibrationPath(path); });
    CalibrationResult result =
        calibrate(comm, static_cast<int>(command.threads), std::cerr);
    rootAttempt([&] { writeCalibration(path, result); });
    if (comm.isRoot())
      std::cerr << "calibrated " << describeCalibration(result) << " -> "
                << path << std::endl;
  });
}

/// --hang-report DIR: prints what the flight records in `dir` say.
int hangReport(const std::string &dir) {
  std::vector<std::string> skipped;
  std::vector<FlightRecord> records = readFlightRecords(dir, &skipped);
  // Said before "no flight records", which would otherwise hide why.
  std::sort(skipped.begin(), skipped.end());
  for (const std::string &line : skipped)
    std::cerr << "loom-run: warning: " << line << std::endl;
  if (records.empty())
    throw Error("no flight records in " + dir +
                " (a rank writes DIR/rank<R>.json when one of its collectives "
                "times out and LOOM_RUN_FLIGHT_DIR names DIR)");
  int ranks = 0;
  for (const FlightRecord &r : records)
    ranks = std::max({ranks, r.ranks, r.rank + 1});
  std::cout << describeHang(records, ranks) << "\n" << describeRecords(records);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  setToolName("loom-run");
  try {
    Command command = parse(argc, argv);
    JobInfo job = detectJob();
    if (!job.underLauncher() && command.ranks > 1)
      return launch(command, argv[0]);
    if (!command.hangReportDir.empty())
      return hangReport(command.hangReportDir);
    if (!command.calibratePath.empty())
      return calibrateMachine(command, job);
    return train(command, job);
  } catch (const UsageError &e) {
    if (launcherRank() <= 0)
      std::cerr << "loom-run: error: " << e.what()
                << "\n(run 'loom-run --help' for usage)" << std::endl;
    return 2;
  } catch (const SilentError &) {
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "loom-run: error: " << e.what() << std::endl;
    return 1;
  } catch (...) {
    std::cerr << "loom-run: error: unknown internal error" << std::endl;
    return 1;
  }
}
