//===- Replicas.h - Do all ranks hold the same model? -----------*- C++ -*-===//
//
// Internal to the runtime. Under data parallelism every rank holds a full,
// identical copy of the params and optimizer state, which is what lets rank 0
// alone write the checkpoint. A compiled step whose collectives broke that
// (a missing gradient all-reduce, a non-deterministic reduction) would make
// the checkpoint silently drop the other ranks' models, so saves check it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_REPLICAS_H
#define LOOM_RUNTIME_SRC_REPLICAS_H

#include <string>
#include <vector>

namespace loom::rt {

class Tensor;
class Communicator;

/// Collective. "" if every rank's params and optimizer state (as a
/// checkpoint holds them: a ZeRO artifact's gathered whole, ZeroShards.h)
/// are bitwise equal to rank 0's; otherwise a message naming the first rank
/// that differs (the same message on every rank).
std::string compareReplicas(Communicator &comm,
                            const std::vector<Tensor *> &params,
                            const std::vector<Tensor *> &optimizerState);

/// The same check for `tensors` only (CO2: the replicated outer state, which
/// every rank computes from the same means while the local models differ).
/// `what` names them in the message.
std::string compareReplicas(Communicator &comm,
                            const std::vector<Tensor *> &tensors,
                            const char *what);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_REPLICAS_H
