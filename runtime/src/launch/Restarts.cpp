//===- Restarts.cpp - Running a local job again after a crash ---*- C++ -*-===//
//
// `loom-run --ranks N --save PATH --max-restarts R`: when a rank crashes or
// is killed, the launcher starts the job again from the last checkpoint the
// job itself saved at PATH (resume is bit-exact, so the result is the one an
// uninterrupted run gives), at most R times. Ranks that all stop on an error
// they agreed on are not restarted: that error would come back.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Checkpoint.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Launcher.h"
#include "loom/runtime/Metrics.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace loom::rt {

namespace {

/// `args` without the flags `names` and their values (`--flag V` or
/// `--flag=V`).
std::vector<std::string>
withoutFlags(const std::vector<std::string> &args,
             std::initializer_list<const char *> names) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    bool drop = false;
    for (const char *name : names) {
      if (args[i] == name) {
        drop = true;
        ++i; // its value
        break;
      }
      if (args[i].rfind(std::string(name) + "=", 0) == 0) {
        drop = true;
        break;
      }
    }
    if (!drop)
      kept.push_back(args[i]);
  }
  return kept;
}

/// Keeps the metrics an attempt wrote (the next attempt starts the files
/// afresh): FILE becomes FILE.attempt<k>, FILE.rank<r> FILE.rank<r>.attempt<k>.
void keepMetrics(const std::string &path, int ranks, int attempt) {
  if (path.empty())
    return;
  for (int rank = 0; rank < ranks; ++rank) {
    std::string file = rankMetricsPath(path, rank);
    std::error_code error;
    if (std::filesystem::exists(file, error))
      std::filesystem::rename(file, file + ".attempt" + std::to_string(attempt),
                              error);
  }
}

void say(const std::string &text) {
  std::fprintf(stderr, "%s: %s\n", toolName(), text.c_str());
  std::fflush(stderr);
}

} // namespace

int launchWithRestarts(LaunchOptions launch, const RestartOptions &restarts) {
  setenv("LOOM_RUN_ATTEMPT", "1", /*overwrite=*/1);
  if (restarts.maxRestarts == 0)
    return launchLocalRanks(launch).status;
  // The step the job ends at: where its --load resumes, plus --steps.
  int64_t target = restarts.steps;
  if (!restarts.loadPath.empty())
    if (auto loaded = peekCheckpoint(restarts.loadPath))
      target += loaded->step;
  // What --save held before the job: a checkpoint of an earlier job there is
  // no place to resume this one from.
  const std::optional<CheckpointPeek> before =
      peekCheckpoint(restarts.savePath);
  const std::vector<std::string> original = launch.args;

  LaunchResult result = launchLocalRanks(launch);
  int restart = 0;
  for (; result.status != 0 && result.restartable &&
         restart < restarts.maxRestarts;
       ++restart) {
    const std::string counted =
        formatString("restart %d of %lld", restart + 1,
                     static_cast<long long>(restarts.maxRestarts));
    std::optional<CheckpointPeek> saved = peekCheckpoint(restarts.savePath);
    if (saved && before && saved->trainerJson == before->trainerJson)
      saved.reset();
    launch.args = original;
    if (saved && saved->step >= target) {
      say(formatString("the job saved its last step (%lld) in %s before it "
                       "failed; nothing is left to run",
                       static_cast<long long>(target), saved->path.c_str()));
      return 0;
    }
    if (saved) {
      launch.args = withoutFlags(original, {"--load", "--steps"});
      launch.args.insert(launch.args.end(),
                         {"--load", restarts.savePath, "--steps",
                          std::to_string(target - saved->step)});
      say(formatString("%s: resuming from %s at step %lld (%lld of %lld "
                       "steps left)",
                       counted.c_str(), saved->path.c_str(),
                       static_cast<long long>(saved->step),
                       static_cast<long long>(target - saved->step),
                       static_cast<long long>(target)));
    } else {
      say(counted + ": starting over (the job saved no checkpoint yet)");
    }
    keepMetrics(restarts.metricsPath, launch.ranks, restart + 1);
    setenv("LOOM_RUN_ATTEMPT", std::to_string(restart + 2).c_str(), 1);
    result = launchLocalRanks(launch);
  }
  if (result.status != 0 && result.restartable)
    say(formatString("giving up after %d restart%s (--max-restarts %lld)",
                     restart, restart == 1 ? "" : "s",
                     static_cast<long long>(restarts.maxRestarts)));
  return result.status;
}

} // namespace loom::rt
