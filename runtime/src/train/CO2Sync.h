//===- CO2Sync.h - CO2 local updating as a sync policy ---------*- C++ -*-===//
//
// Internal to the runtime. The SyncPolicy of a CO2 artifact (loomc --co2):
// the ranks train their local models without talking, and every
// local_steps steps an outer step (CO2Rounds.h) whose collective overlaps
// the next round. See docs/co2.md and docs/trainer.md.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_TRAIN_CO2SYNC_H
#define LOOM_RUNTIME_SRC_TRAIN_CO2SYNC_H

#include "train/SyncPolicy.h"

#include <memory>

namespace loom::rt {

/// `artifact` must be a CO2 artifact (manifest co2.local_steps > 0).
std::unique_ptr<SyncPolicy> makeCO2Sync(Artifact &artifact, Communicator &comm);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_TRAIN_CO2SYNC_H
