//===- MeshGroups.h - The communicators of a mesh's axes --------*- C++ -*-===//
//
// A collective of compiled code names its group by a number (abi.h): 0 is
// every rank of the job, and any other is a bit set of the mesh axes the
// group spans (bit i: the manifest mesh's axis i), the ranks that differ
// only along those axes. loomc numbers the groups the same way
// (passes/Bufferize/RuntimeCalls.cpp, runtimeGroup). The mesh is row-major:
// rank = sum over axes of coordinate x stride, the last axis fastest.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_ARTIFACT_MESHGROUPS_H
#define LOOM_RUNTIME_SRC_ARTIFACT_MESHGROUPS_H

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace loom::rt {

class Communicator;
struct MeshSpec;

/// Where `rank` lies in its group of the axes in `mask`: the index of the
/// group among the groups of those axes (row-major over the other axes)
/// and the rank's index in it (row-major over the axes in `mask`).
std::pair<int64_t, int64_t> groupPosition(const MeshSpec &mesh, int64_t rank,
                                          unsigned mask);

/// Ranks in a group of the axes in `mask`.
int64_t groupSize(const MeshSpec &mesh, unsigned mask);

/// The communicator of each group id of a mesh, connected over the job's.
struct MeshGroups {
  /// By group id; [0] is the job's own, null where the mesh has no such
  /// group.
  std::vector<Communicator *> byId;
  std::vector<std::unique_ptr<Communicator>> owned;

  MeshGroups();
  ~MeshGroups();
  Communicator *find(int64_t group) const {
    return group >= 0 && group < static_cast<int64_t>(byId.size()) ? byId[group]
                                                                   : nullptr;
  }
};

/// The groups of every set of `mesh`'s axes over `world`: the job's own
/// communicator for the sets that span every rank, one rank's for those of
/// one, `world.split` for the others. Collective (every rank connects the
/// same groups in the same order); throws when `world` cannot split (a
/// device communicator: sub-groups run on the host backend only).
std::unique_ptr<MeshGroups> connectMeshGroups(Communicator &world,
                                              const MeshSpec &mesh);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_ARTIFACT_MESHGROUPS_H
