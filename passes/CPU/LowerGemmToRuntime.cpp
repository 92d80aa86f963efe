//===- LowerGemmToRuntime.cpp - Bufferized matmuls to runtime BLAS --------===//
#include "passes/Bufferize/RuntimeCalls.h"
#include "passes/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "loom-lower-gemm-to-runtime"

namespace mlir::loom {
#define GEN_PASS_DEF_LOWERGEMMTORUNTIMEPASS
#include "passes/CPU/Passes.h.inc"

namespace {

/// Operand layout of one GEMM operand: pointer to its first element, row
/// stride (leading dimension) and batch stride, all in elements.
struct GemmOperand {
  Value ptr, ld, batchStride;
};

GemmOperand describe(OpBuilder &b, Location loc, Value m, bool batched) {
  auto type = cast<MemRefType>(m.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, m);
  Value ptr = bufferPointer(b, loc, m, meta);
  Type i64 = b.getI64Type();
  auto toI64 = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, i64, v);
  };
  unsigned r = type.getRank();
  Value ld = toI64(meta.getStrides()[r - 2]);
  Value bs = batched ? toI64(meta.getStrides()[0])
                     : arith::ConstantIntOp::create(b, loc, 0, 64).getResult();
  return GemmOperand{ptr, ld, bs};
}

/// Whether `map` (over dims (b?, m, n, k)) reads operand dims (x, y).
bool reads(AffineMap map, unsigned x, unsigned y, bool batched) {
  unsigned off = batched ? 1 : 0;
  if (map.getNumResults() != 2 + off)
    return false;
  if (batched && map.getResult(0) != getAffineDimExpr(0, map.getContext()))
    return false;
  return map.getResult(off) == getAffineDimExpr(off + x, map.getContext()) &&
         map.getResult(off + 1) == getAffineDimExpr(off + y, map.getContext());
}

struct LowerGemmToRuntimePass
    : impl::LowerGemmToRuntimePassBase<LowerGemmToRuntimePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> gemms;
    module.walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        gemms.push_back(cast<linalg::LinalgOp>(op));
    });
    for (linalg::LinalgOp op : gemms)
      if (succeeded(lower(module, op)))
        ++numGemms;
  }

  /// `<prefix>_<suffix>`; `et` is C's element type (and beta's).
  func::FuncOp declare(ModuleOp module, StringRef suffix, FloatType et) {
    OpBuilder b(module.getContext());
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    Type ptr = LLVM::LLVMPointerType::get(b.getContext());
    auto type = b.getFunctionType({i64, i32, i32, i64, i64, i64, ptr, i64, i64,
                                   ptr, i64, i64, et, ptr, i64, i64},
                                  {});
    return declareRuntimeFunction(module, prefix + "_" + suffix.str(), type);
  }

  /// The runtime GEMM for operands of `in` into a result of `out`: f32 and
  /// f64, or bf16 operands into f32 (--loom-demote-matmuls). Empty if none.
  static StringRef suffixFor(Type in, Type out) {
    if (in == out && (out.isF32() || out.isF64()))
      return out.isF32() ? "f32" : "f64";
    if (in.isBF16() && out.isF32())
      return "bf16";
    return "";
  }

  LogicalResult lower(ModuleOp module, linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics())
      return failure();
    bool batched = isa<linalg::BatchMatmulOp>(op);
    Value a = op.getDpsInputOperand(0)->get();
    Value bm = op.getDpsInputOperand(1)->get();
    Value c = op.getDpsInitOperand(0)->get();
    auto et =
        dyn_cast<FloatType>(cast<MemRefType>(c.getType()).getElementType());
    Type in = cast<MemRefType>(a.getType()).getElementType();
    if (!et || cast<MemRefType>(bm.getType()).getElementType() != in)
      return failure();
    StringRef suffix = suffixFor(in, et);
    if (suffix.empty())
      return failure();
    // Dims are (b?, m, n, k): 0 = m, 1 = n, 2 = k.
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool ta = reads(maps[0], 2, 0, batched);
    if (!ta && !reads(maps[0], 0, 2, batched))
      return failure();
    bool tb = reads(maps[1], 1, 2, batched);
    if (!tb && !reads(maps[1], 2, 1, batched))
      return failure();
    if (!reads(maps[2], 0, 1, batched))
      return failure();

    // Check everything before building anything: a matmul left for the loop
    // lowering must come out unchanged.
    for (Value v : {a, bm, c})
      if (!hasUnitInnerStride(cast<MemRefType>(v.getType())))
        return failure();
    OpBuilder b(op);
    Location loc = op.getLoc();
    GemmOperand ga = describe(b, loc, a, batched),
                gb = describe(b, loc, bm, batched),
                gc = describe(b, loc, c, batched);
    auto ct = cast<MemRefType>(c.getType());
    auto at = cast<MemRefType>(a.getType());
    unsigned r = ct.getRank();
    auto i64c = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, v, 64);
    };
    auto i32c = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, v, 32);
    };
    int64_t m = ct.getDimSize(r - 2), n = ct.getDimSize(r - 1);
    int64_t k = at.getDimSize(ta ? r - 2 : r - 1);
    int64_t batch = batched ? ct.getDimSize(0) : 1;
    Value beta = arith::ConstantOp::create(b, loc, b.getFloatAttr(et, 1.0));
    func::CallOp::create(
        b, loc, declare(module, suffix, et),
        ValueRange{i64c(batch), i32c(ta), i32c(tb), i64c(m), i64c(n), i64c(k),
                   ga.ptr, ga.ld, ga.batchStride, gb.ptr, gb.ld, gb.batchStride,
                   beta, gc.ptr, gc.ld, gc.batchStride});
    op->erase();
    return success();
  }
};

} // namespace
} // namespace mlir::loom
