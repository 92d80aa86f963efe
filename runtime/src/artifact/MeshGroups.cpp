//===- MeshGroups.cpp - The communicators of a mesh's axes ------*- C++ -*-===//
#include "MeshGroups.h"

#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Manifest.h"

namespace loom::rt {

std::pair<int64_t, int64_t> groupPosition(const MeshSpec &mesh, int64_t rank,
                                          unsigned mask) {
  int64_t color = 0, key = 0, stride = 1;
  std::vector<int64_t> coords(mesh.shape.size());
  for (size_t i = mesh.shape.size(); i-- > 0;) {
    coords[i] = (rank / stride) % mesh.shape[i];
    stride *= mesh.shape[i];
  }
  for (size_t i = 0; i < mesh.shape.size(); ++i) {
    if (mask & (1u << i))
      key = key * mesh.shape[i] + coords[i];
    else
      color = color * mesh.shape[i] + coords[i];
  }
  return {color, key};
}

int64_t groupSize(const MeshSpec &mesh, unsigned mask) {
  int64_t size = 1;
  for (size_t i = 0; i < mesh.shape.size(); ++i)
    if (mask & (1u << i))
      size *= mesh.shape[i];
  return size;
}

MeshGroups::MeshGroups() = default;
MeshGroups::~MeshGroups() = default;

std::unique_ptr<MeshGroups> connectMeshGroups(Communicator &world,
                                              const MeshSpec &mesh) {
  auto groups = std::make_unique<MeshGroups>();
  const size_t axes = mesh.axes.size();
  if (axes > 8)
    fail("a mesh of %zu axes has more groups than the runtime numbers (at "
         "most 8 axes)",
         axes);
  groups->byId.assign(size_t(1) << axes, nullptr);
  groups->byId[0] = &world;
  for (unsigned mask = 1; mask < groups->byId.size(); ++mask) {
    int64_t size = groupSize(mesh, mask);
    if (size == world.size()) {
      groups->byId[mask] = &world;
      continue;
    }
    std::unique_ptr<Communicator> group;
    if (size == 1) {
      group = std::make_unique<LocalCommunicator>();
    } else {
      auto [color, key] = groupPosition(mesh, world.rank(), mask);
      group = world.split(static_cast<int>(color), static_cast<int>(key));
      if (!group)
        fail("the %s communicator cannot form groups of ranks, which the "
             "artifact's mesh (%s) needs for its collectives",
             world.backend(), mesh.describe().c_str());
    }
    groups->byId[mask] = group.get();
    groups->owned.push_back(std::move(group));
  }
  return groups;
}

} // namespace loom::rt
