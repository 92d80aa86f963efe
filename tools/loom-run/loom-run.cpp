//===- loom-run.cpp - Train a compiled Loom artifact ------------*- C++ -*-===//
//
// Thin main: parses flags into TrainOptions and hands them to the runtime's
// Trainer. Every failure is one line `loom-run: error: ...` and a non-zero
// exit status (2 for command-line mistakes, 1 for everything else).
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Artifact.h"
#include "loom/runtime/Blas.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Flags.h"
#include "loom/runtime/Trainer.h"

#include <iostream>

using namespace loom::rt;

static const char *kHelp = R"(usage: loom-run ARTIFACT_DIR --steps N [options]

Trains the model compiled by `loomc ... -o ARTIFACT_DIR`: calls its
train_step N times, printing progress to stderr and the final loss to stdout.

options:
  --steps N         number of training steps to run (required; after --load
                    of a checkpoint, N more steps)
  --data SRC        where batches come from (default: synthetic):
                      synthetic     seeded random data (classify: labels from
                                    a random teacher network; lm: random tokens)
                      text:PATH     the file's bytes are tokens (vocab >= 256)
                      tokens:PATH   little-endian uint16 tokens (nanoGPT .bin)
  --shuffle         draw token windows at random (seeded) instead of reading
                    the file in order
  --seed S          seed for parameter init, synthetic data and shuffling
                    (default: 0; on resume, the checkpoint's seed)
  --threads N       OpenBLAS threads (default: 1)
  --log-every K     progress line every K steps, plus the first and last
                    (default: 10; 0: first and last only)
  --metrics FILE    write one JSON object per step and a final summary
                    object to FILE (JSON lines)
  --load PATH       a checkpoint directory: resume params, optimizer state,
                    step and data position; a .safetensors file: load the
                    weights only (fresh optimizer, step 0)
  --save PATH       save a checkpoint directory at the end (atomically)
  --save-every K    also save every K steps (needs --save)
  -h, --help        show this help

examples:
  loom-run out/ --steps 1000 --data text:corpus.txt --metrics m.jsonl \
      --save ckpt --save-every 100
  loom-run out/ --steps 500 --data text:corpus.txt --load ckpt --save ckpt
)";

static int run(int argc, char **argv) {
  TrainOptions options;
  std::string artifactDir, value;
  bool stepsGiven = false;
  int64_t threads = 1;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    if (args.flag("-h") || args.flag("--help")) {
      std::cout << kHelp;
      return 0;
    }
    if (args.value("--steps", value)) {
      options.steps = parseIntFlag("--steps", value, 0);
      stepsGiven = true;
    } else if (args.value("--data", value)) {
      options.data = value;
    } else if (args.flag("--shuffle")) {
      options.shuffle = true;
    } else if (args.value("--seed", value)) {
      options.seed = parseSeedFlag("--seed", value);
      options.seedGiven = true;
    } else if (args.value("--threads", value)) {
      threads = parseIntFlag("--threads", value, 1);
    } else if (args.value("--log-every", value)) {
      options.logEvery = parseIntFlag("--log-every", value, 0);
    } else if (args.value("--metrics", value)) {
      options.metricsPath = value;
    } else if (args.value("--load", value)) {
      options.loadPath = value;
    } else if (args.value("--save", value)) {
      options.savePath = value;
    } else if (args.value("--save-every", value)) {
      options.saveEvery = parseIntFlag("--save-every", value, 1);
    } else if (args.current().size() > 1 && args.current()[0] == '-') {
      throw UsageError("unknown option '" + args.current() + "'");
    } else if (artifactDir.empty()) {
      artifactDir = args.take();
    } else {
      throw UsageError("unexpected argument '" + args.current() +
                       "' (only one ARTIFACT_DIR)");
    }
  }
  if (artifactDir.empty())
    throw UsageError("missing ARTIFACT_DIR");
  if (!stepsGiven)
    throw UsageError("missing --steps N");
  if (options.saveEvery > 0 && options.savePath.empty())
    throw UsageError("--save-every needs --save PATH");

  setBlasThreads(static_cast<int>(threads));
  std::unique_ptr<Artifact> artifact = Artifact::load(artifactDir);
  LocalCommunicator comm;
  Trainer(*artifact, options, comm, std::cerr, std::cout).run();
  return 0;
}

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError &e) {
    std::cerr << "loom-run: error: " << e.what()
              << "\n(run 'loom-run --help' for usage)" << std::endl;
    return 2;
  } catch (const std::exception &e) {
    std::cerr << "loom-run: error: " << e.what() << std::endl;
    return 1;
  } catch (...) {
    std::cerr << "loom-run: error: unknown internal error" << std::endl;
    return 1;
  }
}
