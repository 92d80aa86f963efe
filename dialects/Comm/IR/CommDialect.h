//===- CommDialect.h - The comm dialect -------------------------*- C++ -*-===//
#ifndef LOOM_DIALECTS_COMM_IR_COMMDIALECT_H
#define LOOM_DIALECTS_COMM_IR_COMMDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Comm/IR/CommDialect.h.inc"

#endif // LOOM_DIALECTS_COMM_IR_COMMDIALECT_H
