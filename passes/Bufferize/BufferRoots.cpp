//===- BufferRoots.cpp - Which buffers can overlap ------------------------===//
#include "passes/Bufferize/BufferRoots.h"

#include "dialects/Loom/IR/LoomDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::loom {

Value rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

bool isDistinctBuffer(Value root) {
  if (auto arg = dyn_cast<BlockArgument>(root)) {
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return fn && fn->hasAttr(kEntryAttr) && arg.getOwner()->isEntryBlock();
  }
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
      root.getDefiningOp());
}

FailureOr<BufferAccesses> collectAccesses(Operation *op) {
  BufferAccesses accesses;
  WalkResult walk = op->walk([&](Operation *nested) {
    if (nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      bool read = isa<MemoryEffects::Read>(effect.getEffect());
      bool write = isa<MemoryEffects::Write>(effect.getEffect());
      if (!read && !write)
        continue;
      Value buffer = effect.getValue();
      if (!buffer)
        return WalkResult::interrupt();
      Value root = rootBuffer(buffer);
      if (!isDistinctBuffer(root))
        return WalkResult::interrupt();
      (read ? accesses.reads : accesses.writes).insert(root);
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return accesses;
}

} // namespace mlir::loom
