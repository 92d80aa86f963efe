//===- LoomDialect.cpp - The loom dialect ---------------------------------===//
#include "dialects/Loom/IR/LoomDialect.h"
#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::loom;

#include "dialects/Loom/IR/LoomDialect.cpp.inc"
#include "dialects/Loom/IR/LoomEnums.cpp.inc"
#include "dialects/Loom/IR/LoomInterfaces.cpp.inc"

namespace {
/// Every loom op may be inlined: they only refer to module-level
/// `loom.param` symbols, which stay visible from any function.
struct LoomInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void LoomDialect::initialize() {
  addInterfaces<LoomInlinerInterface>();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialects/Loom/IR/LoomOps.cpp.inc"
      >();
}
