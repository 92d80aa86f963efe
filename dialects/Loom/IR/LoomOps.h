//===- LoomOps.h - loom dialect ops -----------------------------*- C++ -*-===//
#ifndef LOOM_DIALECTS_LOOM_IR_LOOMOPS_H
#define LOOM_DIALECTS_LOOM_IR_LOOMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Loom/IR/LoomDialect.h"

#include "dialects/Loom/IR/LoomEnums.h.inc"
#include "dialects/Loom/IR/LoomInterfaces.h.inc"

namespace mlir::loom {
/// The storage of parameters and their optimizer state: `loom.get_param`
/// reads it, optimizer ops write it, so no read is moved past an update.
struct ParamResource : public SideEffects::Resource::Base<ParamResource> {
  StringRef getName() final { return "loom.param"; }
};
} // namespace mlir::loom

#define GET_OP_CLASSES
#include "dialects/Loom/IR/LoomOps.h.inc"

#endif // LOOM_DIALECTS_LOOM_IR_LOOMOPS_H
