//===- LoomAttrs.cpp - loom dialect attributes ----------------------------===//
#include "dialects/Loom/IR/LoomDialect.h"
#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::loom;

#define GET_ATTRDEF_CLASSES
#include "dialects/Loom/IR/LoomAttrs.cpp.inc"

void LoomDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Loom/IR/LoomAttrs.cpp.inc"
      >();
}

static double value(FloatAttr attr) { return attr.getValueAsDouble(); }

LogicalResult MachineAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  FloatAttr linkGbps, FloatAttr linkLatencyUs,
                                  FloatAttr gflops, FloatAttr commCpu) {
  if (!(value(linkGbps) > 0) || !(value(gflops) > 0))
    return emitError() << "link_gbps and gflops must be positive";
  if (!(value(linkLatencyUs) >= 0))
    return emitError() << "link_latency_us must not be negative";
  if (!(value(commCpu) >= 0 && value(commCpu) <= 1))
    return emitError() << "comm_cpu must be in [0, 1]";
  return success();
}

/// The sharded layout: one slice per rank at r x `shard`, none larger.
static LogicalResult verifyShards(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t ranks, ArrayAttr params,
                                  int64_t shard, DenseI64ArrayAttr offsetsAttr,
                                  DenseI64ArrayAttr sizesAttr) {
  if (!params || params.empty() ||
      !llvm::all_of(params, llvm::IsaPred<StringAttr>))
    return emitError() << "sharded needs params: the trained parameters' "
                          "names in flattening order";
  if (shard <= 0)
    return emitError() << "sharded needs a positive shard_elements";
  ArrayRef<int64_t> offsets, sizes;
  if (offsetsAttr)
    offsets = offsetsAttr.asArrayRef();
  if (sizesAttr)
    sizes = sizesAttr.asArrayRef();
  if (int64_t(offsets.size()) != ranks || int64_t(sizes.size()) != ranks)
    return emitError() << "shard_offsets and shard_sizes need one entry per "
                          "rank ("
                       << ranks << ")";
  for (int64_t r = 0; r < ranks; ++r)
    if (offsets[r] != r * shard || sizes[r] < 0 || sizes[r] > shard)
      return emitError() << "rank " << r << "'s slice must start at " << r
                         << " x shard_elements and hold at most "
                            "shard_elements elements";
  return success();
}

LogicalResult
CO2Attr::verify(function_ref<InFlightDiagnostic()> emitError,
                int64_t localSteps, FloatAttr outerLr, FloatAttr outerMomentum,
                FloatAttr gapPenalty, FloatAttr clip, FlatSymbolRefAttr mesh,
                int64_t ranks, StringRef localStepsReason, bool sharded,
                ArrayAttr params, int64_t shardElements,
                DenseI64ArrayAttr shardOffsets, DenseI64ArrayAttr shardSizes) {
  if (localSteps < 1 || ranks < 2)
    return emitError() << "local_steps must be at least 1 and ranks at "
                          "least 2";
  if (!(value(outerLr) > 0))
    return emitError() << "outer_lr must be positive";
  if (!(value(outerMomentum) >= 0 && value(outerMomentum) < 1))
    return emitError() << "outer_momentum must be in [0, 1)";
  if (!(value(gapPenalty) >= 0) || !(value(clip) >= 0))
    return emitError() << "gap_penalty and clip must not be negative";
  if (sharded)
    return verifyShards(emitError, ranks, params, shardElements, shardOffsets,
                        shardSizes);
  if (params || shardElements || shardOffsets || shardSizes)
    return emitError() << "params, shard_elements and the slices are for "
                          "sharded = true only";
  return success();
}

LogicalResult CompressionAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef method,
    int64_t rank, int64_t bits, FloatAttr density, int64_t warmupSteps,
    int64_t resolveEvery, StringRef objective, ArrayAttr params,
    DenseI64ArrayAttr rows, DenseI64ArrayAttr cols, StringRef errorMeasure) {
  if (!llvm::is_contained({"bf16", "powersgd", "quant", "topk", "lgreco"},
                          method))
    return emitError() << "method must be bf16, powersgd, quant, topk or "
                          "lgreco, got \""
                       << method << "\"";
  if (rank < 1)
    return emitError() << "rank must be at least 1, got " << rank;
  if (bits != 2 && bits != 4 && bits != 8)
    return emitError() << "bits must be 2, 4 or 8, got " << bits;
  if (!(value(density) > 0 && value(density) <= 1))
    return emitError() << "density must be in (0, 1], got " << value(density);
  if (warmupSteps < 0 || resolveEvery < 0)
    return emitError() << "warmup_steps and resolve_every must not be "
                          "negative";
  if (method == "lgreco" && warmupSteps < 1)
    return emitError() << "lgreco needs at least one warm-up step (it "
                          "measures at the last)";
  if (objective != "time" && objective != "bytes")
    return emitError() << "objective must be time or bytes, got \"" << objective
                       << "\"";
  if (errorMeasure != "relative" && errorMeasure != "absolute")
    return emitError() << "error_measure must be relative or absolute, got \""
                       << errorMeasure << "\"";
  if (!llvm::all_of(params, llvm::IsaPred<StringAttr>) ||
      rows.size() != int64_t(params.size()) ||
      cols.size() != int64_t(params.size()))
    return emitError() << "params must be names, one per entry of rows and "
                          "cols";
  if (llvm::any_of(rows.asArrayRef(), [](int64_t v) { return v < 1; }) ||
      llvm::any_of(cols.asArrayRef(), [](int64_t v) { return v < 1; }))
    return emitError() << "rows and cols must be positive";
  return success();
}

LogicalResult LoomDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  auto expect = [&](bool ok, StringRef what) -> LogicalResult {
    if (ok)
      return success();
    return op->emitError() << "'" << attr.getName().getValue() << "' must be a "
                           << what << " attribute";
  };
  if (attr.getName() == kCO2Attr)
    return expect(isa<CO2Attr>(attr.getValue()), "#loom.co2");
  if (attr.getName() == kMachineAttr)
    return expect(isa<MachineAttr>(attr.getValue()), "#loom.machine");
  if (attr.getName() == kCompressionAttr)
    return expect(isa<CompressionAttr>(attr.getValue()), "#loom.compression");
  if (attr.getName() == kTensorSplitAttr) {
    auto split = dyn_cast<TensorSplitAttr>(attr.getValue());
    if (failed(expect(bool(split), "#loom.tensor_split")))
      return failure();
    auto param = dyn_cast<ParamOp>(op);
    if (!param)
      return op->emitError()
             << "'" << kTensorSplitAttr << "' belongs on a loom.param";
    RankedTensorType type = param.getTensorType();
    if (split.getDim() >= type.getRank() ||
        type.getDimSize(split.getDim()) % split.getBlocks() != 0)
      return op->emitError() << "'" << kTensorSplitAttr << "': dimension "
                             << split.getDim() << " of " << type << " is not "
                             << split.getBlocks() << " equal blocks";
  }
  return success();
}

LogicalResult
TensorSplitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t dim, int64_t blocks, int64_t ranks,
                        FlatSymbolRefAttr, StringAttr axis) {
  if (dim < 0)
    return emitError() << "dim must not be negative, got " << dim;
  if (blocks < 1)
    return emitError() << "blocks must be at least 1, got " << blocks;
  if (ranks < 2)
    return emitError() << "ranks must be at least 2, got " << ranks;
  if (axis.getValue().empty())
    return emitError() << "axis must not be empty";
  return success();
}

LogicalResult ZeroAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t stage, FlatSymbolRefAttr, int64_t ranks,
                               ArrayAttr params) {
  if (stage < 1 || stage > 3)
    return emitError() << "stage must be 1, 2 or 3, got " << stage;
  if (ranks < 2)
    return emitError() << "ranks must be at least 2, got " << ranks;
  if (!llvm::all_of(params, llvm::IsaPred<StringAttr>))
    return emitError() << "params must be parameter names";
  return success();
}
