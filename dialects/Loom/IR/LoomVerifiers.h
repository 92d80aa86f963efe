//===- LoomVerifiers.h - Checks shared by the loom op verifiers -*- C++ -*-===//
#ifndef LOOM_DIALECTS_LOOM_IR_LOOMVERIFIERS_H
#define LOOM_DIALECTS_LOOM_IR_LOOMVERIFIERS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::loom {

/// Looks up the `loom.param` that `op` names and checks `type` against it;
/// `what` names the checked value in the error ("result", "gradient").
LogicalResult verifyParamUse(Operation *op, FlatSymbolRefAttr name, Type type,
                             SymbolTableCollection &symbolTable,
                             StringRef what);

} // namespace mlir::loom

#endif // LOOM_DIALECTS_LOOM_IR_LOOMVERIFIERS_H
