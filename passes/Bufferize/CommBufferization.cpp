//===- CommBufferization.cpp - Bufferizing collectives to runtime calls ---===//
//
// One-shot bufferization models for the comm collectives. Each bufferizes to
// a call of the matching `loom_rt_*` function of the runtime ABI:
// all_reduce and broadcast work in place on their operand's buffer (the
// analysis inserts a copy when the operand is still needed), reduce_scatter
// and all_gather write a new buffer.
//
//===----------------------------------------------------------------------===//
#include "passes/Bufferize/Passes.h"
#include "passes/Bufferize/RuntimeCalls.h"

#include "dialects/Comm/IR/CommOps.h"
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

int32_t reduceCode(comm::ReduceKind kind) {
  switch (kind) {
  case comm::ReduceKind::sum:
    return LOOM_SUM;
  case comm::ReduceKind::mean:
    return LOOM_MEAN;
  case comm::ReduceKind::max:
    return LOOM_MAX;
  }
  return LOOM_SUM;
}

/// Builds the runtime call: `name(group, <buffers as pointers>, count,
/// <ints>)` on the op's group (runtimeGroup).
FailureOr<func::CallOp> callRuntime(RewriterBase &rewriter, Operation *op,
                                    StringRef name, ValueRange buffers,
                                    int64_t count, ArrayRef<int32_t> ints,
                                    TypeRange results = {}) {
  FailureOr<int64_t> group = runtimeGroup(op);
  if (failed(group))
    return failure();
  Location loc = op->getLoc();
  MLIRContext *ctx = op->getContext();
  Type i64 = rewriter.getI64Type(), i32 = rewriter.getI32Type();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  SmallVector<Type> types{i64};
  SmallVector<Value> args{
      arith::ConstantIntOp::create(rewriter, loc, *group, 64)};
  for (Value buffer : buffers) {
    types.push_back(ptr);
    args.push_back(bufferPointer(rewriter, loc, buffer));
  }
  types.push_back(i64);
  args.push_back(arith::ConstantIntOp::create(rewriter, loc, count, 64));
  for (int32_t v : ints) {
    types.push_back(i32);
    args.push_back(arith::ConstantIntOp::create(rewriter, loc, v, 32));
  }
  auto fn = declareRuntimeFunction(op->getParentOfType<ModuleOp>(), name,
                                   FunctionType::get(ctx, types, results));
  return func::CallOp::create(rewriter, loc, fn, args);
}

/// The handle of an asynchronous collective's runtime call as the token its
/// comm.wait consumes.
Value tokenFromHandle(RewriterBase &rewriter, Operation *op, Value handle) {
  return UnrealizedConversionCastOp::create(
             rewriter, op->getLoc(), comm::TokenType::get(op->getContext()),
             handle)
      .getResult(0);
}

/// The trailing integer of an in-place collective (reduction or root) and
/// the runtime function that runs it.
template <typename OpTy>
int32_t opCode(OpTy op) {
  if constexpr (std::is_same_v<OpTy, comm::AllReduceOp> ||
                std::is_same_v<OpTy, comm::AllReduceStartOp>)
    return reduceCode(op.getReduction());
  else
    return int32_t(op.getRootAttr().getInt());
}
/// The gradient slot of a compressed all-reduce (--loom-compress), which
/// calls the runtime's compressed form instead.
template <typename OpTy>
std::optional<uint64_t> compressSlot(OpTy op) {
  if constexpr (std::is_same_v<OpTy, comm::AllReduceOp> ||
                std::is_same_v<OpTy, comm::AllReduceStartOp>)
    return op.getCompressSlot();
  else
    return std::nullopt;
}
StringRef runtimeName(comm::AllReduceOp) { return "loom_rt_all_reduce"; }
StringRef runtimeName(comm::BroadcastOp) { return "loom_rt_broadcast"; }
StringRef runtimeName(comm::AllReduceStartOp) {
  return "loom_rt_all_reduce_start";
}
StringRef runtimeName(comm::BroadcastStartOp) {
  return "loom_rt_broadcast_start";
}

/// Ops that read and write their tensor operand's buffer in place, their
/// tensor result being that same buffer (the op's only result, or a start's
/// in-flight tensor).
template <typename Model, typename OpTy>
struct InPlaceModelBase
    : public BufferizableOpInterface::ExternalModel<Model, OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return true;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &,
                                      const AnalysisState &) const {
    return {{op->getResults().back(), BufferRelation::Equivalent}};
  }
};

/// all_reduce and broadcast (and their starts): in place on the operand.
template <typename OpTy>
struct InPlaceCollectiveModel
    : public InPlaceModelBase<InPlaceCollectiveModel<OpTy>, OpTy> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto coll = cast<OpTy>(op);
    FailureOr<Value> buffer =
        denseBuffer(rewriter, op, coll.getInput(), options, state);
    if (failed(buffer))
      return failure();
    auto type = coll.getInput().getType();
    int32_t dtype = runtimeDType(type.getElementType());
    constexpr bool isStart = std::is_same_v<OpTy, comm::AllReduceStartOp> ||
                             std::is_same_v<OpTy, comm::BroadcastStartOp>;
    Type i64 = rewriter.getI64Type();
    StringRef name = runtimeName(coll);
    SmallVector<int32_t, 3> ints{dtype, opCode(coll)};
    if (std::optional<uint64_t> slot = compressSlot(coll)) {
      if (*slot > uint64_t(INT32_MAX))
        return op->emitError("compress_slot ") << *slot << " is out of range";
      name = isStart ? "loom_rt_compressed_all_reduce_start"
                     : "loom_rt_compressed_all_reduce";
      ints.push_back(int32_t(*slot));
    }
    auto call =
        callRuntime(rewriter, op, name, {*buffer}, type.getNumElements(), ints,
                    isStart ? TypeRange{i64} : TypeRange{});
    if (failed(call))
      return failure();
    if constexpr (isStart) {
      // The token carries the runtime's handle to the matching wait.
      Value token = tokenFromHandle(rewriter, op, call->getResult(0));
      replaceOpWithBufferizedValues(rewriter, op, {token, *buffer});
    } else {
      replaceOpWithBufferizedValues(rewriter, op, *buffer);
    }
    return success();
  }
};

/// reduce_scatter and all_gather (and their starts): read the operand,
/// write a new buffer (a start's in-flight tensor). The runtime's starts copy
/// the operand before returning, so its buffer is free again at once.
template <typename OpTy>
struct ResizingCollectiveModel
    : public NewBuffersModelBase<ResizingCollectiveModel<OpTy>, OpTy> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto coll = cast<OpTy>(op);
    if (coll.getDimAttr().getInt() != 0)
      return op->emitError("the CPU lowering supports collectives along "
                           "dimension 0 only (contiguous slices)");
    FailureOr<Value> in =
        denseBuffer(rewriter, op, coll.getInput(), options, state);
    if (failed(in))
      return failure();
    auto outType = cast<RankedTensorType>(op->getResults().back().getType());
    FailureOr<Value> out = options.createAlloc(
        rewriter, op->getLoc(),
        MemRefType::get(outType.getShape(), outType.getElementType()), {});
    if (failed(out))
      return failure();
    int32_t dtype = runtimeDType(outType.getElementType());
    constexpr bool isStart = std::is_same_v<OpTy, comm::ReduceScatterStartOp> ||
                             std::is_same_v<OpTy, comm::AllGatherStartOp>;
    constexpr bool isScatter = std::is_same_v<OpTy, comm::ReduceScatterOp> ||
                               std::is_same_v<OpTy, comm::ReduceScatterStartOp>;
    SmallVector<Type, 1> results;
    if (isStart)
      results.push_back(rewriter.getI64Type());
    FailureOr<func::CallOp> called;
    if constexpr (isScatter)
      called = callRuntime(rewriter, op,
                           isStart ? "loom_rt_reduce_scatter_start"
                                   : "loom_rt_reduce_scatter",
                           {*in, *out}, outType.getNumElements(),
                           {dtype, reduceCode(coll.getReduction())}, results);
    else
      called = callRuntime(
          rewriter, op,
          isStart ? "loom_rt_all_gather_start" : "loom_rt_all_gather",
          {*in, *out}, coll.getInput().getType().getNumElements(), {dtype},
          results);
    if (failed(called))
      return failure();
    if constexpr (isStart)
      replaceOpWithBufferizedValues(
          rewriter, op,
          {tokenFromHandle(rewriter, op, called->getResult(0)), *out});
    else
      replaceOpWithBufferizedValues(rewriter, op, *out);
    return success();
  }
};

/// comm.wait: completes the collective in its in-flight buffer.
struct WaitModel : public InPlaceModelBase<WaitModel, comm::WaitOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto wait = cast<comm::WaitOp>(op);
    FailureOr<Value> buffer =
        getBuffer(rewriter, wait.getInflight(), options, state);
    if (failed(buffer))
      return failure();
    Value handle = UnrealizedConversionCastOp::create(rewriter, op->getLoc(),
                                                      rewriter.getI64Type(),
                                                      wait.getToken())
                       .getResult(0);
    auto fn = declareRuntimeFunction(
        op->getParentOfType<ModuleOp>(), "loom_rt_wait",
        rewriter.getFunctionType({rewriter.getI64Type()}, {}));
    func::CallOp::create(rewriter, op->getLoc(), fn, handle);
    replaceOpWithBufferizedValues(rewriter, op, *buffer);
    return success();
  }
};

/// comm.transfer_start: reads its source, writes its destination in place
/// (a fresh buffer, or the parameter an offload writes back): a call of
/// `loom_rt_transfer_start(dst, src, bytes, direction)`, whose handle the
/// matching comm.wait waits for.
struct TransferStartModel
    : public BufferizableOpInterface::ExternalModel<TransferStartModel,
                                                    comm::TransferStartOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return operand.get() == cast<comm::TransferStartOp>(op).getSource();
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return operand.getOperandNumber() ==
           cast<comm::TransferStartOp>(op).getDestMutable().getOperandNumber();
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    auto transfer = cast<comm::TransferStartOp>(op);
    if (operand.getOperandNumber() !=
        transfer.getDestMutable().getOperandNumber())
      return {};
    return {{transfer.getInflight(), BufferRelation::Equivalent}};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto transfer = cast<comm::TransferStartOp>(op);
    FailureOr<Value> src =
        denseBuffer(rewriter, op, transfer.getSource(), options, state);
    FailureOr<Value> dst =
        getBuffer(rewriter, transfer.getDest(), options, state);
    if (failed(src) || failed(dst))
      return failure();
    if (!cast<MemRefType>(dst->getType()).getLayout().isIdentity())
      return op->emitError("a transfer's destination must be a dense buffer");
    Location loc = op->getLoc();
    MLIRContext *ctx = op->getContext();
    auto type = transfer.getSource().getType();
    int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
    Type i64 = rewriter.getI64Type(), i32 = rewriter.getI32Type();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    auto fn = declareRuntimeFunction(
        op->getParentOfType<ModuleOp>(), "loom_rt_transfer_start",
        FunctionType::get(ctx, {ptr, ptr, i64, i32}, {i64}));
    int32_t direction = transfer.getDirection() == "upload"
                            ? LOOM_TRANSFER_UPLOAD
                            : LOOM_TRANSFER_OFFLOAD;
    auto call = func::CallOp::create(
        rewriter, loc, fn,
        ValueRange{bufferPointer(rewriter, loc, *dst),
                   bufferPointer(rewriter, loc, *src),
                   arith::ConstantIntOp::create(rewriter, loc, bytes, 64),
                   arith::ConstantIntOp::create(rewriter, loc, direction, 32)});
    replaceOpWithBufferizedValues(
        rewriter, op, {tokenFromHandle(rewriter, op, call.getResult(0)), *dst});
    return success();
  }
};

/// comm.send reads its operand: `loom_rt_send(group, buf, count, dtype,
/// peer)`, which copies it before returning.
struct SendModel
    : public BufferizableOpInterface::ExternalModel<SendModel, comm::SendOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto send = cast<comm::SendOp>(op);
    FailureOr<Value> buffer =
        denseBuffer(rewriter, op, send.getInput(), options, state);
    if (failed(buffer))
      return failure();
    auto type = send.getInput().getType();
    if (failed(callRuntime(
            rewriter, op, "loom_rt_send", {*buffer}, type.getNumElements(),
            {runtimeDType(type.getElementType()), int32_t(send.getPeer())})))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// comm.recv writes a new buffer: `loom_rt_recv(group, buf, count, dtype,
/// peer)`.
struct RecvModel
    : public BufferizableOpInterface::ExternalModel<RecvModel, comm::RecvOp> {
  bool bufferizesToAllocation(Operation *, Value) const { return true; }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto recv = cast<comm::RecvOp>(op);
    auto type = recv.getType();
    FailureOr<Value> out = options.createAlloc(
        rewriter, op->getLoc(),
        MemRefType::get(type.getShape(), type.getElementType()), {});
    if (failed(out))
      return failure();
    if (failed(callRuntime(
            rewriter, op, "loom_rt_recv", {*out}, type.getNumElements(),
            {runtimeDType(type.getElementType()), int32_t(recv.getPeer())})))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, *out);
    return success();
  }
};

} // namespace

void mlir::loom::registerCommBufferizationModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, comm::CommDialect *) {
    // The bufferized form calls the runtime through these dialects.
    ctx->loadDialect<LLVM::LLVMDialect, arith::ArithDialect, func::FuncDialect,
                     memref::MemRefDialect>();
    comm::AllReduceOp::attachInterface<
        InPlaceCollectiveModel<comm::AllReduceOp>>(*ctx);
    comm::BroadcastOp::attachInterface<
        InPlaceCollectiveModel<comm::BroadcastOp>>(*ctx);
    comm::AllReduceStartOp::attachInterface<
        InPlaceCollectiveModel<comm::AllReduceStartOp>>(*ctx);
    comm::BroadcastStartOp::attachInterface<
        InPlaceCollectiveModel<comm::BroadcastStartOp>>(*ctx);
    comm::WaitOp::attachInterface<WaitModel>(*ctx);
    comm::TransferStartOp::attachInterface<TransferStartModel>(*ctx);
    comm::SendOp::attachInterface<SendModel>(*ctx);
    comm::RecvOp::attachInterface<RecvModel>(*ctx);
    comm::ReduceScatterOp::attachInterface<
        ResizingCollectiveModel<comm::ReduceScatterOp>>(*ctx);
    comm::AllGatherOp::attachInterface<
        ResizingCollectiveModel<comm::AllGatherOp>>(*ctx);
    comm::ReduceScatterStartOp::attachInterface<
        ResizingCollectiveModel<comm::ReduceScatterStartOp>>(*ctx);
    comm::AllGatherStartOp::attachInterface<
        ResizingCollectiveModel<comm::AllGatherStartOp>>(*ctx);
  });
}
