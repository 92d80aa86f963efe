//===- CommandLine.cpp - loom-run's flags -----------------------*- C++ -*-===//
//
// One table (kFlags) says what each flag takes, what it sets and in which
// modes it applies; parseCommandLine walks argv with it (Flags.h says why
// not with absl flags), and the check* functions refuse the combinations that
// make no sense, in the order their messages have always come.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"
#include "Help.h"

#include "loom/Version.h"
#include "loom/runtime/Data.h"
#include "loom/runtime/Flags.h"

#include <cstdlib>
#include <iostream>
#include <utility>

using namespace loom::rt;

namespace loom::run {

namespace {

/// --async-collectives's values.
constexpr std::pair<const char *, AsyncCollectives> kAsyncModes[] = {
    {"auto", AsyncCollectives::Auto},
    {"on", AsyncCollectives::On},
    {"off", AsyncCollectives::Off}};

/// The most --threads a rank takes (OpenBLAS's own limit, which it applies
/// silently, is lower on most builds: a warning says so).
constexpr int64_t kMaxThreads = 1024;

/// Where a flag applies.
enum FlagScope : unsigned {
  /// A training option, which --eval also takes and --calibrate refuses.
  Training = 0,
  /// The launcher's own: the ranks it starts run without it, and the modes
  /// do not refuse it.
  Launcher = 1,
  /// Refused with --eval too.
  TrainOnly = 2,
  /// Not a training option: --calibrate takes it.
  AnyMode = 4,
};

enum FlagForm : bool { Bare = false, WithValue = true };

struct FlagSpec {
  const char *name;
  FlagForm form;
  unsigned scope;
  /// Stores the flag's value (which a flag without one ignores).
  void (*handle)(Command &command, const std::string &value);
};

/// A file spec (--data, --eval-data): its form is the command line's (exit
/// status 2); a file it names that cannot be read is bad input (1), found
/// when it is opened.
std::string checkedDataSpec(const std::string &prefix,
                            const std::string &spec) {
  if (std::string problem = dataSpecProblem(spec); !problem.empty())
    throw UsageError(prefix + problem);
  return spec;
}

[[noreturn]] void showHelp(Command &, const std::string &) {
  std::cout << kHelp;
  std::exit(0);
}

[[noreturn]] void showVersion(Command &, const std::string &) {
  std::cout << "loom-run: " LOOM_VERSION_STRING "\n";
  std::exit(0);
}

const FlagSpec kFlags[] = {
    {"-h", Bare, AnyMode, showHelp},
    {"--help", Bare, AnyMode, showHelp},
    {"--version", Bare, AnyMode, showVersion},
    {"--ranks", WithValue, Launcher,
     [](Command &c, const std::string &v) {
       c.ranks = parseIntFlag("--ranks", v, 1);
     }},
    {"--max-restarts", WithValue, Launcher,
     [](Command &c, const std::string &v) {
       c.maxRestarts = parseIntFlag("--max-restarts", v, 0);
     }},
    {"--stop-timeout", WithValue, Launcher,
     [](Command &c, const std::string &v) {
       c.stopTimeout =
           parsePositiveFlag("--stop-timeout", v, /*allowZero=*/true);
       // The timer takes whole seconds in a time_t; 0 already means none.
       if (c.stopTimeout > 1e6)
         throw UsageError("--stop-timeout: expected at most 1000000 seconds "
                          "(0: no limit), got " +
                          v);
       c.stopTimeoutGiven = true;
     }},
    {"--hang-report", WithValue, Training,
     [](Command &c, const std::string &v) {
       if (v.empty())
         throw UsageError("--hang-report: expected a DIR of flight records");
       c.hangReportDir = v;
     }},
    {"--calibrate", WithValue, AnyMode,
     [](Command &c, const std::string &v) {
       if (v.empty())
         throw UsageError("--calibrate: expected a FILE to write");
       c.calibratePath = v;
     }},
    {"--eval", Bare, Training,
     [](Command &c, const std::string &) { c.eval = true; }},
    {"--eval-data", WithValue, TrainOnly,
     [](Command &c, const std::string &v) {
       c.options.evalData = checkedDataSpec("--eval-data: ", v);
     }},
    {"--eval-every", WithValue, TrainOnly,
     [](Command &c, const std::string &v) {
       c.options.evalEvery = parseIntFlag("--eval-every", v, 1);
     }},
    {"--eval-batches", WithValue, Training,
     [](Command &c, const std::string &v) {
       c.options.evalBatches = parseIntFlag("--eval-batches", v, 1);
     }},
    {"--steps", WithValue, Training,
     [](Command &c, const std::string &v) {
       c.options.steps = parseIntFlag("--steps", v, 0);
       c.stepsGiven = true;
     }},
    {"--data", WithValue, Training,
     [](Command &c, const std::string &v) {
       c.options.data = checkedDataSpec("", v);
     }},
    {"--shuffle", Bare, TrainOnly,
     [](Command &c, const std::string &) { c.options.shuffle = true; }},
    {"--seed", WithValue, Training,
     [](Command &c, const std::string &v) {
       c.options.seed = parseSeedFlag("--seed", v);
       c.options.seedGiven = true;
     }},
    {"--device", WithValue, Training,
     [](Command &c, const std::string &v) {
       c.device = parseTargetName(v);
       if (!c.device)
         throw UsageError("--device: expected cpu or cuda, got '" + v + "'");
     }},
    {"--threads", WithValue, AnyMode,
     [](Command &c, const std::string &v) {
       c.threads = parseIntFlag("--threads", v, 1);
       // OpenBLAS allocates per thread; no machine has this many cores.
       if (c.threads > kMaxThreads)
         throw UsageError("--threads: expected at most " +
                          std::to_string(kMaxThreads) +
                          " BLAS threads per rank, got " + v);
     }},
    {"--log-every", WithValue, Training,
     [](Command &c, const std::string &v) {
       c.options.logEvery = parseIntFlag("--log-every", v, 0);
     }},
    {"--metrics", WithValue, Training,
     [](Command &c, const std::string &v) { c.options.metricsPath = v; }},
    {"--trace", WithValue, TrainOnly,
     [](Command &c, const std::string &v) { c.options.tracePath = v; }},
    {"--load", WithValue, Training,
     [](Command &c, const std::string &v) { c.options.loadPath = v; }},
    {"--save", WithValue, TrainOnly,
     [](Command &c, const std::string &v) { c.options.savePath = v; }},
    {"--save-async", Bare, TrainOnly,
     [](Command &c, const std::string &) { c.options.saveAsync = true; }},
    {"--save-every", WithValue, TrainOnly,
     [](Command &c, const std::string &v) {
       c.options.saveEvery = parseIntFlag("--save-every", v, 1);
     }},
    {"--async-collectives", WithValue, Training,
     [](Command &c, const std::string &v) {
       for (const auto &[name, mode] : kAsyncModes)
         if (v == name)
           return void(c.options.asyncCollectives = mode);
       throw UsageError("--async-collectives " + v +
                        ": expected auto (the default), on or off");
     }},
    {"--log-plan", Bare, TrainOnly,
     [](Command &c, const std::string &) { c.options.logPlan = true; }},
    {"--reduce-order", WithValue, Training,
     [](Command &c, const std::string &v) {
       if (v != "mpi" && v != "rank")
         throw UsageError("--reduce-order " + v +
                          ": expected mpi (the MPI library's order, the "
                          "default) or rank (sums in rank order)");
       c.rankOrderedSums = v == "rank";
     }},
    {"--offload-bandwidth", WithValue, Training,
     [](Command &c, const std::string &v) {
       c.offloadBandwidth = 1e9 * parsePositiveFlag("--offload-bandwidth", v,
                                                    /*allowZero=*/true);
     }},
    {"--check-collectives", Bare, AnyMode,
     [](Command &c, const std::string &) { c.checkCollectives = true; }},
    {"--collective-timeout", WithValue, AnyMode,
     [](Command &c, const std::string &v) {
       c.collectiveTimeout = parsePositiveFlag("--collective-timeout", v,
                                               /*allowZero=*/true);
     }},
};

/// The first of each kind of argument given, for the checks between them.
struct FirstGiven {
  /// A flag --eval refuses.
  std::string trainOnly;
  /// A training option, which --calibrate refuses.
  std::string training;
  /// Any argument but --hang-report (which takes no others), as spelled.
  std::string other;

  void note(const std::string &arg, const FlagSpec *spec) {
    if (other.empty() && !(spec && std::string(spec->name) == "--hang-report"))
      other = arg;
    if (!spec)
      return;
    if (trainOnly.empty() && (spec->scope & TrainOnly))
      trainOnly = spec->name;
    if (training.empty() && !(spec->scope & AnyMode))
      training = spec->name;
  }
};

/// Consumes the flag at `args` if kFlags has it, with its value.
const FlagSpec *takeFlag(ArgCursor &args, std::string &value) {
  for (const FlagSpec &spec : kFlags)
    if (spec.form == WithValue ? args.value(spec.name, value)
                               : args.flag(spec.name))
      return &spec;
  return nullptr;
}

/// The launcher's flags need a launcher, and a training one.
void checkLauncherFlags(const Command &command) {
  if (command.maxRestarts > 0) {
    if (command.ranks < 2)
      throw UsageError("--max-restarts needs --ranks N (N > 1): the launcher "
                       "it starts restarts the job (under mpirun or srun, "
                       "use their restart options)");
    if (!command.calibratePath.empty() || command.eval)
      throw UsageError("--max-restarts is for training");
    if (command.options.savePath.empty())
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
}

void checkCalibrate(const Command &command, const FirstGiven &first) {
  const char *separate =
      " are separate modes: calibrate first (loom-run --calibrate FILE), "
      "compile with loomc --calibration=FILE, then train (loom-run "
      "ARTIFACT_DIR --steps N)";
  if (!command.artifactDir.empty())
    throw UsageError("--calibrate and ARTIFACT_DIR" + std::string(separate));
  if (command.stepsGiven)
    throw UsageError("--calibrate and --steps" + std::string(separate));
  if (!first.training.empty())
    throw UsageError("--calibrate takes no " + first.training +
                     " (a training option); only --ranks, --threads, "
                     "--collective-timeout and --check-collectives apply "
                     "to it");
}

void checkTraining(const Command &command) {
  const TrainOptions &options = command.options;
  if (options.evalBatches > 0 && options.evalData.empty())
    throw UsageError("--eval-batches needs --eval or --eval-data");
  if (options.evalEvery > 0 && options.evalData.empty())
    throw UsageError("--eval-every needs --eval-data SRC");
  if (!command.stepsGiven)
    throw UsageError("missing --steps N");
  if (options.saveEvery > 0 && options.savePath.empty())
    throw UsageError("--save-every needs --save PATH");
  if (options.saveAsync && options.savePath.empty())
    throw UsageError("--save-async needs --save PATH");
}

/// Each mode (--hang-report, --calibrate, --eval, training) refuses what
/// does not apply to it.
void checkMode(const Command &command, const FirstGiven &first) {
  if (!command.hangReportDir.empty()) {
    if (!first.other.empty())
      throw UsageError("--hang-report DIR takes no other arguments (got '" +
                       first.other + "')");
    return;
  }
  if (!command.calibratePath.empty())
    return checkCalibrate(command, first);
  if (command.artifactDir.empty())
    throw UsageError("missing ARTIFACT_DIR");
  if (!command.eval)
    return checkTraining(command);
  if (command.stepsGiven)
    throw UsageError("--eval runs no steps; use --eval-batches N for how "
                     "many batches to evaluate");
  if (!first.trainOnly.empty())
    throw UsageError("--eval takes no " + first.trainOnly +
                     " (a training option)");
}

} // namespace

Command parseCommandLine(int argc, char **argv) {
  Command command;
  FirstGiven first;
  std::string value;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    const size_t start = args.consumed();
    const std::string arg = args.current();
    const FlagSpec *spec = takeFlag(args, value);
    if (spec)
      spec->handle(command, value);
    else if (arg.size() > 1 && arg[0] == '-')
      throw UsageError("unknown option '" + arg + "'");
    else if (command.artifactDir.empty())
      command.artifactDir = args.take();
    else
      throw UsageError("unexpected argument '" + arg +
                       "' (only one ARTIFACT_DIR)");
    if (spec && (spec->scope & Launcher))
      continue;
    first.note(arg, spec);
    command.rankArgs.insert(command.rankArgs.end(), argv + 1 + start,
                            argv + 1 + args.consumed());
  }
  checkLauncherFlags(command);
  checkMode(command, first);
  return command;
}

const char *asyncCollectivesName(AsyncCollectives mode) {
  for (const auto &[name, value] : kAsyncModes)
    if (value == mode)
      return name;
  return "?";
}

} // namespace loom::run
