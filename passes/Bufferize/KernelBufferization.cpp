//===- KernelBufferization.cpp - loom ops the CPU runtime computes --------===//
//
// One-shot bufferization models of the loom ops that reach bufferization
// on the CPU target (--loom-decompose keep-runtime-kernels): each reads
// its operands' dense buffers, writes new buffers and becomes a call of its
// runtime kernel (abi.h): loom.document_attention and its gradient.
//
//===----------------------------------------------------------------------===//
#include "passes/Bufferize/Passes.h"
#include "passes/Bufferize/RuntimeCalls.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "loom/runtime/abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::loom;

namespace {

/// `name(dtype, heads, nq, nk, dh, scale, <buffers as pointers>)`: the
/// operands' dense buffers, then fresh buffers for the results, which
/// replace the op.
LogicalResult callKernel(Operation *op, RewriterBase &rewriter, StringRef name,
                         Value query, Value key, double scale,
                         const BufferizationOptions &options,
                         BufferizationState &state) {
  Location loc = op->getLoc();
  MLIRContext *ctx = op->getContext();
  SmallVector<Value> buffers;
  for (Value operand : op->getOperands()) {
    FailureOr<Value> buffer =
        denseBuffer(rewriter, op, operand, options, state);
    if (failed(buffer))
      return failure();
    buffers.push_back(*buffer);
  }
  SmallVector<Value> results;
  for (Value result : op->getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    FailureOr<Value> out = options.createAlloc(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
        {});
    if (failed(out))
      return failure();
    results.push_back(*out);
  }
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  Type i64 = rewriter.getI64Type(), i32 = rewriter.getI32Type();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  auto int64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(rewriter, loc, v, 64);
  };
  SmallVector<Type> types{i32, i64, i64, i64, i64, rewriter.getF64Type()};
  SmallVector<Value> args{
      arith::ConstantIntOp::create(rewriter, loc,
                                   runtimeDType(q.getElementType()), 32),
      int64(q.getDimSize(0)),
      int64(q.getDimSize(1)),
      int64(k.getDimSize(1)),
      int64(q.getDimSize(2)),
      arith::ConstantFloatOp::create(rewriter, loc, rewriter.getF64Type(),
                                     APFloat(scale))};
  for (Value buffer : llvm::concat<Value>(buffers, results)) {
    types.push_back(ptr);
    args.push_back(bufferPointer(rewriter, loc, buffer));
  }
  auto fn = declareRuntimeFunction(op->getParentOfType<ModuleOp>(), name,
                                   FunctionType::get(ctx, types, {}));
  func::CallOp::create(rewriter, loc, fn, args);
  replaceOpWithBufferizedValues(rewriter, op, results);
  return success();
}

/// The runtime function each kernel op calls.
StringRef kernelName(DocumentAttentionOp) {
  return "loom_rt_document_attention";
}
StringRef kernelName(DocumentAttentionGradOp) {
  return "loom_rt_document_attention_grad";
}

template <typename OpTy>
struct KernelModel : public NewBuffersModelBase<KernelModel<OpTy>, OpTy> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto kernel = cast<OpTy>(op);
    return callKernel(op, rewriter, kernelName(kernel), kernel.getQuery(),
                      kernel.getKey(), kernel.getScale().convertToDouble(),
                      options, state);
  }
};

} // namespace

void mlir::loom::registerKernelBufferizationModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, LoomDialect *) {
    ctx->loadDialect<LLVM::LLVMDialect, arith::ArithDialect, func::FuncDialect,
                     memref::MemRefDialect>();
    DocumentAttentionOp::attachInterface<KernelModel<DocumentAttentionOp>>(
        *ctx);
    DocumentAttentionGradOp::attachInterface<
        KernelModel<DocumentAttentionGradOp>>(*ctx);
  });
}
