//===- Compress.cpp - Compressed gradient averaging -----------------------===//
//
// Marks the gradients' mean all-reduces as compressed and records them, in
// slot order, in loom.compression. The compression itself (the methods,
// error feedback, L-GreCo's measurements and knapsack) is the runtime's:
// it changes each slot's method between steps without recompiling, which
// compiled-in compression could not.
//
//===----------------------------------------------------------------------===//
#include "passes/Distribute/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "loom-compress"

namespace mlir::loom {
#define GEN_PASS_DEF_COMPRESSPASS
#include "passes/Distribute/Passes.h.inc"

namespace {

struct CompressPass : impl::CompressPassBase<CompressPass> {
  // The options, one per line of CompressOptions.def.
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> NAME{*this, FLAG, llvm::cl::desc(HELP), llvm::cl::init(DEFAULT)};
#include "passes/Distribute/CompressOptions.def"

  CompressPass() = default;
  CompressPass(const CompressPass &other) : Base(other) {}
  explicit CompressPass(const CompressOptions &options) {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) NAME = options.NAME;
#include "passes/Distribute/CompressOptions.def"
  }

  /// The options' values.
  CompressOptions values() const {
    CompressOptions o;
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) o.NAME = NAME;
#include "passes/Distribute/CompressOptions.def"
    return o;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto grad = module.lookupSymbol<func::FuncOp>("loss_and_grad");
    if (!grad) {
      module.emitError("--loom-compress needs @loss_and_grad: run "
                       "--loom-autodiff and --loom-data-parallel first");
      return signalPassFailure();
    }
    MLIRContext *ctx = module.getContext();
    const CompressOptions o = values();
    // The attribute's verifier checks the options (one message for the
    // pass and for hand-written IR).
    auto check = CompressionAttr::getChecked(
        [&] { return module.emitError("--loom-compress: "); }, ctx,
        StringRef(o.method), o.rank, o.bits,
        FloatAttr::get(Float64Type::get(ctx), o.density), o.warmupSteps,
        o.resolveEvery, StringRef(o.objective), ArrayAttr::get(ctx, {}),
        DenseI64ArrayAttr::get(ctx, {}), DenseI64ArrayAttr::get(ctx, {}),
        StringRef(o.errorMeasure));
    if (!check)
      return signalPassFailure();

    SmallVector<Attribute> params;
    SmallVector<int64_t> rows, cols;
    auto ret = cast<func::ReturnOp>(grad.getBody().front().getTerminator());
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      auto of = grad.getResultAttrOfType<FlatSymbolRefAttr>(i, kGradOfAttr);
      if (!of)
        continue;
      auto param = module.lookupSymbol<ParamOp>(of.getAttr());
      RankedTensorType type = param.getTensorType();
      if (type.getRank() < 2 || type.getNumElements() == 0)
        continue; // vectors and scalars: sent as they are
      auto mean = ret.getOperand(i).getDefiningOp<comm::AllReduceOp>();
      if (!mean || mean.getReduction() != comm::ReduceKind::mean) {
        ret.emitError("--loom-compress: the gradient of ")
            << of << " is not averaged by a comm.all_reduce mean (run "
            << "--loom-data-parallel first)";
        return signalPassFailure();
      }
      if (!type.getElementType().isF32()) {
        param.emitError("--loom-compress: compressed gradients are f32; ")
            << of << " is " << type.getElementType();
        return signalPassFailure();
      }
      int64_t r = type.getNumElements() / type.getShape().back();
      int64_t c = type.getShape().back();
      if (o.method == "powersgd" && o.rank > std::min(r, c)) {
        param.emitError("--loom-compress: PowerSGD rank ")
            << o.rank << " is above the smaller dimension " << std::min(r, c)
            << " of " << of << "'s gradient (" << r << " x " << c
            << "); choose a rank of at most " << std::min(r, c);
        return signalPassFailure();
      }
      mean.setCompressSlot(params.size());
      params.push_back(StringAttr::get(ctx, param.getSymName()));
      rows.push_back(r);
      cols.push_back(c);
      ++numCompressed;
    }
    module->setAttr(kCompressionAttr,
                    CompressionAttr::get(ctx, o.method, o.rank, o.bits,
                                         check.getDensity(), o.warmupSteps,
                                         o.resolveEvery, o.objective,
                                         ArrayAttr::get(ctx, params),
                                         DenseI64ArrayAttr::get(ctx, rows),
                                         DenseI64ArrayAttr::get(ctx, cols),
                                         o.errorMeasure));
  }
};

} // namespace

std::unique_ptr<Pass> createCompressPass(const CompressOptions &options) {
  return std::make_unique<CompressPass>(options);
}

} // namespace mlir::loom
