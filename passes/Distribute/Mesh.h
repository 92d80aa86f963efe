//===- Mesh.h - The data-parallel mesh the distribution passes share -*- C++
//-*-===//
#ifndef LOOM_PASSES_DISTRIBUTE_MESH_H
#define LOOM_PASSES_DISTRIBUTE_MESH_H

#include "dialects/Comm/IR/CommOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::loom {

/// The module's `comm.mesh @name`, which must have `axis`, or a new one of
/// `ranks` ranks along `axis` at the top of the module: the first pass that
/// needs the ranks declares them, the later ones use the same mesh. An
/// error at the mesh or the module otherwise.
FailureOr<comm::MeshOp> getOrCreateMesh(ModuleOp module, StringRef name,
                                        StringRef axis, int64_t ranks);

} // namespace mlir::loom

#endif // LOOM_PASSES_DISTRIBUTE_MESH_H
