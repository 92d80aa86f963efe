//===- CommandLine.h - loom-run's flags -------------------------*- C++ -*-===//
//
// What loom-run's command line asks for, parsed and checked (CommandLine.cpp)
// apart from the main, which only runs it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TOOLS_LOOM_RUN_COMMANDLINE_H
#define LOOM_TOOLS_LOOM_RUN_COMMANDLINE_H

#include "loom/runtime/Target.h"
#include "loom/runtime/Trainer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::run {

struct Command {
  rt::TrainOptions options;
  std::string artifactDir;
  /// --calibrate FILE; "" when training.
  std::string calibratePath;
  /// --hang-report DIR; "" when training.
  std::string hangReportDir;
  /// --eval: evaluate the loss instead of training.
  bool eval = false;
  bool stepsGiven = false;
  int64_t threads = 1;
  int64_t ranks = 0; // 0: not given
  int64_t maxRestarts = 0;
  /// --stop-timeout: seconds the launcher's ranks have to stop on request.
  double stopTimeout = 120;
  bool stopTimeoutGiven = false;
  /// --device; empty: the artifact's target.
  std::optional<rt::Target> device;
  double collectiveTimeout = 60;
  /// --offload-bandwidth, bytes per second (0: no model).
  double offloadBandwidth = 0;
  bool checkCollectives = false;
  /// --reduce-order rank (WorldOptions::rankOrderedSums).
  bool rankOrderedSums = false;
  /// argv without the launcher's own flags (--ranks, --max-restarts,
  /// --stop-timeout) and their values, for the ranks the launcher starts.
  std::vector<std::string> rankArgs;
};

/// --async-collectives's spelling of `mode`.
const char *asyncCollectivesName(rt::AsyncCollectives mode);

/// Parses and checks argv; throws rt::UsageError for a mistake, and exits
/// after printing --help or --version.
Command parseCommandLine(int argc, char **argv);

} // namespace loom::run

#endif // LOOM_TOOLS_LOOM_RUN_COMMANDLINE_H
