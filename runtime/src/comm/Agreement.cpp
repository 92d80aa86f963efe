//===- Agreement.cpp - Failing together -------------------------*- C++ -*-===//
//
// A rank that fails alone in a multi-rank job must not simply exit: its peers
// would wait for it in the next collective. Where ranks reach a known point
// together (after setup, after a checkpoint save), they instead agree on
// whether anyone failed, and the job ends cleanly with one message.
//
// Before that, ranks check that they run the same job: under an external
// launcher each rank has its own command line and, on several hosts, its
// own copy of the artifact, and a stale copy or a different --steps would
// otherwise show up as a hang or, worse, as a run that completes with wrong
// data (scenario 3 of docs/reliability.md).
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"

#include <cstring>

namespace loom::rt {

void agreeOnFailure(Communicator &comm, const std::string &failure) {
  // Max over ranks of (size - rank) for failing ranks picks the lowest one.
  int64_t vote = failure.empty() ? 0 : comm.size() - comm.rank();
  comm.allReduce(&vote, 1, DType::I64, ReduceOp::Max);
  if (vote == 0)
    return;
  int reporter = comm.size() - static_cast<int>(vote);
  if (comm.rank() != reporter)
    throw SilentError();
  if (reporter == 0)
    throw JobError(failure);
  throw JobError("rank " + std::to_string(reporter) + ": " + failure);
}

void failTogether(const Communicator &comm, const std::string &message) {
  if (comm.isRoot())
    throw JobError(message);
  throw SilentError();
}

namespace {

/// Rank 0's values, length-prefixed ("5:hello") so any bytes survive.
std::string pack(const std::vector<JobSetting> &settings) {
  std::string blob;
  for (const JobSetting &s : settings)
    blob += std::to_string(s.value.size()) + ":" + s.value;
  return blob;
}

std::vector<std::string> unpack(const std::string &blob) {
  std::vector<std::string> values;
  size_t at = 0;
  while (at < blob.size()) {
    size_t colon = blob.find(':', at);
    if (colon == std::string::npos)
      break;
    size_t length = std::stoull(blob.substr(at, colon - at));
    values.push_back(blob.substr(colon + 1, length));
    at = colon + 1 + length;
  }
  return values;
}

/// Rank 0's `blob` on every rank, as int64 words (the communicator's
/// smallest type).
std::string broadcastFromRoot(Communicator &comm, std::string blob) {
  int64_t size = static_cast<int64_t>(blob.size());
  comm.broadcast(&size, 1, DType::I64, 0);
  std::vector<int64_t> words((size + 7) / 8, 0);
  if (comm.isRoot())
    std::memcpy(words.data(), blob.data(), blob.size());
  if (!words.empty())
    comm.broadcast(words.data(), static_cast<int64_t>(words.size()), DType::I64,
                   0);
  return std::string(reinterpret_cast<const char *>(words.data()), size);
}

std::string shown(const std::string &value) {
  return value.empty() ? "(empty)" : value;
}

} // namespace

void agreeOnSettings(Communicator &comm,
                     const std::vector<JobSetting> &settings) {
  if (comm.size() == 1)
    return;
  std::vector<std::string> root =
      unpack(broadcastFromRoot(comm, comm.isRoot() ? pack(settings) : ""));
  std::string failure;
  for (size_t i = 0; i < settings.size() && failure.empty(); ++i) {
    const JobSetting &mine = settings[i];
    if (i < root.size() && root[i] == mine.value)
      continue;
    failure = mine.name + " differs from rank 0's: " + shown(mine.value) +
              " here, " + (i < root.size() ? shown(root[i]) : "unknown") +
              " on rank 0; every rank of a job must run the same artifact "
              "with the same options and checkpoint";
  }
  agreeOnFailure(comm, failure);
}

} // namespace loom::rt
