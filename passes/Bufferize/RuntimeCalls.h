//===- RuntimeCalls.h - Calling the runtime ABI -----------------*- C++ -*-===//
//
// Helpers shared by the passes that turn bufferized ops into calls of the
// functions declared in runtime/include/loom/runtime/abi.h: the comm
// collectives' bufferization here, the GEMMs and the arena of the CPU stage
// (passes/CPU), which builds on this library.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_BUFFERIZE_RUNTIMECALLS_H
#define LOOM_PASSES_BUFFERIZE_RUNTIMECALLS_H

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::loom {

/// True when the innermost stride of `type` is statically 1 (rows are
/// contiguous), as BLAS and the collectives need.
bool hasUnitInnerStride(MemRefType type);

/// An `!llvm.ptr` to the first element of `memref` (aligned pointer plus
/// offset), built with memref metadata ops so it works on any layout. Pass
/// `meta` to reuse an existing metadata extraction of `memref`.
Value bufferPointer(OpBuilder &b, Location loc, Value memref,
                    memref::ExtractStridedMetadataOp meta = {});

/// The buffer of `value`, copied into a fresh identity-layout buffer when it
/// is a strided view: the runtime's services take dense buffers.
FailureOr<Value> denseBuffer(RewriterBase &rewriter, Operation *op, Value value,
                             const bufferization::BufferizationOptions &options,
                             bufferization::BufferizationState &state);

/// The one-shot bufferization model of an op that reads every operand and
/// writes only new buffers, its results (collectives that resize, the CPU
/// runtime's kernels); `Model` adds `bufferize`.
template <typename Model, typename OpTy>
struct NewBuffersModelBase
    : public bufferization::BufferizableOpInterface::ExternalModel<Model,
                                                                   OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const bufferization::AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const bufferization::AnalysisState &) const {
    return false;
  }
  bufferization::AliasingValueList
  getAliasingValues(Operation *, OpOperand &,
                    const bufferization::AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value value) const {
    return isa<TensorType>(value.getType());
  }
};

/// The private declaration of runtime function `name`, created at the top of
/// `module` on first use.
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    FunctionType type);

/// The runtime's group id (abi.h) of the ranks `op` (a comm op with `mesh`
/// and `axes` attributes) spans: 0 for every rank, else the bit set of the
/// mesh axes it spans (bit i: axis i; runtime/src/artifact/MeshGroups.h).
FailureOr<int64_t> runtimeGroup(Operation *op);

/// The `loom_dtype` code of an element type (abi.h), or -1.
int32_t runtimeDType(Type elementType);

} // namespace mlir::loom

#endif // LOOM_PASSES_BUFFERIZE_RUNTIMECALLS_H
