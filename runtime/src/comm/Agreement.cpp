//===- Agreement.cpp - Failing together -------------------------*- C++ -*-===//
//
// A rank that fails alone in a multi-rank job must not simply exit: its peers
// would wait for it in the next collective. Where ranks reach a known point
// together (after setup, after a checkpoint save), they instead agree on
// whether anyone failed, and the job ends cleanly with one message.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"

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

} // namespace loom::rt
