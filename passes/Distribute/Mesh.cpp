//===- Mesh.cpp - The data-parallel mesh the distribution passes share ----===//
#include "passes/Distribute/Mesh.h"

#include "mlir/IR/Builders.h"

namespace mlir::loom {

FailureOr<comm::MeshOp> getOrCreateMesh(ModuleOp module, StringRef name,
                                        StringRef axis, int64_t ranks) {
  OpBuilder b(module.getContext());
  if (auto mesh = module.lookupSymbol<comm::MeshOp>(name)) {
    if (!llvm::is_contained(mesh.getAxes(), b.getStringAttr(axis))) {
      mesh.emitError("mesh @") << name << " has no axis '" << axis << "'";
      return failure();
    }
    return mesh;
  }
  if (ranks < 1) {
    module.emitError("ranks must be positive, got ") << ranks;
    return failure();
  }
  b.setInsertionPointToStart(module.getBody());
  return comm::MeshOp::create(b, module.getLoc(), name,
                              ArrayRef<int64_t>{ranks},
                              b.getStrArrayAttr({axis}));
}

} // namespace mlir::loom
