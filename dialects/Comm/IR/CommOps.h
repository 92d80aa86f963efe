//===- CommOps.h - comm dialect ops -----------------------------*- C++ -*-===//
#ifndef LOOM_DIALECTS_COMM_IR_COMMOPS_H
#define LOOM_DIALECTS_COMM_IR_COMMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Comm/IR/CommDialect.h"

#include "dialects/Comm/IR/CommEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Comm/IR/CommTypes.h.inc"

#define GET_OP_CLASSES
#include "dialects/Comm/IR/CommOps.h.inc"

#endif // LOOM_DIALECTS_COMM_IR_COMMOPS_H
