//===- PeerLiveness.h - Is a peer rank's process still there? ---*- C++ -*-===//
//
// Internal to the runtime. A rank waiting in a collective cannot tell a slow
// peer from a dead one through MPI, but it can look at peers on its own
// machine: each rank publishes its identity at startup, and a waiting rank
// checks whether its same-machine peers still exist.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_COMM_PEERLIVENESS_H
#define LOOM_RUNTIME_SRC_COMM_PEERLIVENESS_H

#include <cstdint>

namespace loom::rt {

/// Plain bytes, so ranks can all-gather it.
struct ProcessIdentity {
  char host[64];
  /// The kernel's boot id: same host name and boot id means same kernel.
  char bootId[40];
  /// Inode of /proc/self/ns/pid; pids are only comparable within one
  /// namespace. 0 if unknown (then no peer counts as local).
  uint64_t pidNamespace;
  int32_t pid;
  int32_t reserved;
};

ProcessIdentity currentProcessIdentity();

/// Whether `peer`'s pid can be looked up from `self`'s process.
bool sameProcessSpace(const ProcessIdentity &self, const ProcessIdentity &peer);

/// True when process `pid` no longer runs (absent from /proc, or a zombie).
bool processHasExited(int32_t pid);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_COMM_PEERLIVENESS_H
