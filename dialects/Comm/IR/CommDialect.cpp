//===- CommDialect.cpp - The comm dialect ---------------------------------===//
#include "dialects/Comm/IR/CommDialect.h"
#include "dialects/Comm/IR/CommOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::loom::comm;

#include "dialects/Comm/IR/CommDialect.cpp.inc"
#include "dialects/Comm/IR/CommEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Comm/IR/CommTypes.cpp.inc"

namespace {
/// Collectives may be inlined: they name module-level meshes only.
struct CommInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void CommDialect::initialize() {
  addInterfaces<CommInlinerInterface>();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Comm/IR/CommTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Comm/IR/CommOps.cpp.inc"
      >();
}
