//===- CO2.cpp - Local steps with a stale, overlapped outer all-reduce ----===//
//
// The compiled half of CO2: the inner step without communication and the
// outer update as an entry of its own. The collective that feeds the outer
// update spans `local_steps` calls of the inner step, longer than any one
// entry runs, so the runtime issues it (on its communication thread) from
// the schedule this pass records in `loom.co2`; see docs/co2.md.
//
//===----------------------------------------------------------------------===//
#include "passes/Distribute/Passes.h"

#include "passes/Analysis/CostModel.h"

#include "loom/runtime/CompressionWire.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

#define DEBUG_TYPE "loom-co2"

/// The runtime's model of what compressed averaging sends.
namespace lrt = ::loom::rt;

namespace mlir::loom {
#define GEN_PASS_DEF_CO2PASS
#include "passes/Distribute/Passes.h.inc"

namespace {

/// The sharded outer state's layout, for loom.co2: the trained parameters
/// in flattening order, the slice size and rank r's slice.
struct Shards {
  ArrayAttr params;
  int64_t elements = 0;
  SmallVector<int64_t> offsets, sizes;
};

struct CO2Pass : impl::CO2PassBase<CO2Pass> {
  // The options, one per line of CO2Options.def.
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> NAME{*this, FLAG, llvm::cl::desc(HELP), llvm::cl::init(DEFAULT)};
#include "passes/Distribute/CO2Options.def"

  CO2Pass() = default;
  CO2Pass(const CO2Pass &other) : Base(other) {}
  explicit CO2Pass(const CO2Options &options) {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) NAME = options.NAME;
#include "passes/Distribute/CO2Options.def"
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto grad = module.lookupSymbol<func::FuncOp>("loss_and_grad");
    auto step = module.lookupSymbol<func::FuncOp>("train_step");
    if (!grad || !step) {
      module.emitError("--loom-co2 needs @loss_and_grad and @train_step: run "
                       "--loom-autodiff, --loom-data-parallel and "
                       "--loom-add-optimizer first");
      return signalPassFailure();
    }
    if (module.lookupSymbol("outer_step")) {
      module.emitError("--loom-co2 ran already (@outer_step exists)");
      return signalPassFailure();
    }
    if (failed(checkOptions(module)))
      return signalPassFailure();

    // The inner step: local gradients, no collective. Only synchronous
    // all-reduces may be there (the data-parallel pass's); anything else is
    // a schedule CO2 does not understand.
    comm::MeshOp mesh;
    int64_t ranks = 0;
    WalkResult walk = grad.walk([&](Operation *op) {
      if (auto ar = dyn_cast<comm::AllReduceOp>(op)) {
        mesh = SymbolTable::lookupNearestSymbolFrom<comm::MeshOp>(
            op, ar.getMeshAttr());
        ranks = ar.getGroupSize();
        ar.replaceAllUsesWith(ar.getInput());
        ar.erase();
        return WalkResult::advance();
      }
      if (isa<comm::CommDialect>(op->getDialect())) {
        op->emitError("--loom-co2 expects the synchronous all-reduces of "
                      "--loom-data-parallel (compile without --overlap)");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (!mesh) {
      module.emitError("--loom-co2 needs a data-parallel module: run "
                       "--loom-data-parallel first");
      return signalPassFailure();
    }

    // The parameters the inner step trains, in its order.
    SmallVector<ParamOp> trained;
    for (auto opt : step.getBody().front().getOps<OptimizerOpInterface>())
      if (FlatSymbolRefAttr param = opt.getUpdatedParam())
        trained.push_back(module.lookupSymbol<ParamOp>(param.getAttr()));
    if (trained.empty()) {
      step.emitError("--loom-co2: @train_step updates no parameter");
      return signalPassFailure();
    }

    int64_t tau = localSteps;
    std::string reason;
    if (tau == 0)
      tau = chooseLocalSteps(grad, step, trained, ranks, reason);
    OpBuilder b(module.getContext());
    Shards shards;
    if (sharded) {
      FailureOr<Shards> built = buildOuterShard(module, step, trained, ranks);
      if (failed(built))
        return signalPassFailure();
      shards = std::move(*built);
    } else {
      buildOuterStep(module, step, trained);
    }
    module->setAttr(
        kCO2Attr,
        CO2Attr::get(
            module.getContext(), tau, b.getF64FloatAttr(outerLr),
            b.getF64FloatAttr(outerMomentum), b.getF64FloatAttr(gapPenalty),
            b.getF64FloatAttr(clip),
            FlatSymbolRefAttr::get(mesh.getSymNameAttr()), ranks, reason,
            sharded, shards.params, shards.elements,
            shards.offsets.empty() ? DenseI64ArrayAttr()
                                   : b.getDenseI64ArrayAttr(shards.offsets),
            shards.sizes.empty() ? DenseI64ArrayAttr()
                                 : b.getDenseI64ArrayAttr(shards.sizes)));
  }

  LogicalResult checkOptions(ModuleOp module) {
    if (localSteps < 0)
      return module.emitError("--loom-co2: local-steps must be >= 0 (0: "
                              "chosen by the cost model)");
    if (!(outerLr > 0))
      return module.emitError("--loom-co2: outer-lr must be positive");
    if (!(outerMomentum >= 0 && outerMomentum < 1))
      return module.emitError("--loom-co2: outer-momentum must be in [0, 1)");
    if (gapPenalty < 0 || clip < 0)
      return module.emitError(
          "--loom-co2: gap-penalty and clip must be non-negative (0: off)");
    if (!(maxOverhead > 0 && maxOverhead < 1))
      return module.emitError("--loom-co2: max-overhead must be in (0, 1)");
    if (maxLocalSteps < 1)
      return module.emitError("--loom-co2: max-local-steps must be at least "
                              "1");
    return success();
  }

  /// What the outer round sends: the trained parameters, those that
  /// --loom-compress listed compressed with its method (L-GreCo estimated at
  /// its budget, uniform PowerSGD of its rank, which its plans undercut).
  struct OuterRound {
    double bytes = 0;     ///< of the parameters
    double wireBytes = 0; ///< one rank sends (ring model)
    int collectives = 1;
    std::string compressed; ///< ", compressed by ... to ... MiB" or ""
  };
  static OuterRound outerRound(ModuleOp module, ArrayRef<ParamOp> trained,
                               int64_t ranks) {
    OuterRound round;
    auto compression = module->getAttrOfType<CompressionAttr>(kCompressionAttr);
    std::optional<lrt::Candidate> method;
    if (compression)
      method = candidateOf(compression);
    double plain = 0;
    for (ParamOp p : trained) {
      RankedTensorType type = p.getTensorType();
      double bytes =
          double(type.getNumElements()) * type.getElementTypeBitWidth() / 8;
      round.bytes += bytes;
      std::optional<size_t> slot;
      if (method)
        for (auto [i, name] : llvm::enumerate(compression.getParams()))
          if (cast<StringAttr>(name).getValue() == p.getSymName())
            slot = i;
      int64_t rows = slot ? compression.getRows()[*slot] : 0;
      int64_t cols = slot ? compression.getCols()[*slot] : 0;
      if (!slot || (method->method == lrt::CompressMethod::PowerSGD &&
                    !lrt::wire::powerSgdShrinks(method->rank, rows, cols))) {
        plain += bytes;
        continue;
      }
      round.wireBytes += lrt::wireBytes(*method, rows, cols, int(ranks));
      round.collectives += lrt::collectivesPerAveraging(*method);
    }
    // The plain part: one all-reduce, as without compression.
    round.wireBytes += 2 * plain * double(ranks - 1) / double(ranks);
    if (method)
      round.compressed = llvm::formatv(
          " (compressed by {0} to ~{1:f2} MiB sent per rank{2})",
          compression.getMethod(), round.wireBytes / (1 << 20),
          compression.getMethod() == "lgreco"
              ? llvm::formatv(", estimated at its budget powersgd:rank={0}",
                              compression.getRank())
                    .str()
              : std::string());
    return round;
  }

  /// The method of every compressed parameter (L-GreCo: its budget's).
  static lrt::Candidate candidateOf(CompressionAttr c) {
    StringRef m = c.getMethod();
    if (m == "bf16")
      return lrt::Candidate::bf16();
    if (m == "quant")
      return lrt::Candidate::quant(int(c.getBits()));
    if (m == "topk")
      return lrt::Candidate::topK(c.getDensity().getValueAsDouble());
    return lrt::Candidate::powerSgd(int(c.getRank())); // powersgd, lgreco
  }

  /// The smallest number of local steps whose compute covers the outer
  /// all-reduce of every trained parameter; `reason` says how it was chosen
  /// (loomc prints it, the manifest keeps it).
  int64_t chooseLocalSteps(func::FuncOp grad, func::FuncOp step,
                           ArrayRef<ParamOp> trained, int64_t ranks,
                           std::string &reason) {
    // As --loom-describe-machine recorded it.
    ModuleOp module = step->getParentOfType<ModuleOp>();
    MachineOptions given = getMachineOptions(module);
    MachineModel machine = toMachineModel(given);
    double flops = 0;
    for (func::FuncOp fn : {grad, step})
      fn.walk([&](Operation *op) { flops += estimateFlops(op); });
    OuterRound round = outerRound(module, trained, ranks);
    double compute = flops / machine.flopsPerSecond;
    double comm = machine.linkLatencySeconds * round.collectives +
                  round.wireBytes / machine.linkBytesPerSecond;
    // Sharded, the update of this rank's slice waits for the end of the
    // step during which the reduce-scatter finished: one step more.
    int64_t hide =
        std::max<int64_t>(1, std::ceil(comm / compute)) + (sharded ? 1 : 0);
    // Hidden is not free: while the all-reduce runs, its polls and the
    // network stack take commCpu of its time from the cores compute uses.
    double stolen = given.commCpu * comm;
    int64_t cheap = std::ceil(stolen / (maxOverhead * compute));
    int64_t tau = std::max(hide, cheap);
    reason = llvm::formatv(
        "one inner step computes ~{0:f3} ms ({1:f3} GFLOP at {2:f1} "
        "GFLOP/s); the outer all-reduce of {3:f2} MiB{15} over {4} ranks takes "
        "~{5:f3} ms ({6:f3} Gbit/s, {7:f0} us latency), hidden by {8} local "
        "steps{9}, and takes ~{10:f3} ms of compute from the cores while it "
        "runs ({11:f2} of its time), which {12} local steps keep under "
        "{13:f0}% of a round; local-steps={14}",
        compute * 1e3, flops / 1e9, given.gflops, round.bytes / (1 << 20),
        ranks, comm * 1e3, given.linkGbps, given.linkLatencyUs, hide,
        sharded ? " (one more than the reduce-scatter and all-gather need: "
                  "the sharded update runs between steps)"
                : "",
        stolen * 1e3, given.commCpu, cheap, maxOverhead * 100, tau,
        round.compressed);
    if (tau > maxLocalSteps)
      tau = capLocalSteps(compute, comm, stolen, reason);
    return tau;
  }

  /// local-steps=max-local-steps, where hiding the outer all-reduce would
  /// take more local steps than CO2 has convergence evidence for: says so
  /// and what throughput to expect (a round then waits for its all-reduce).
  int64_t capLocalSteps(double compute, double comm, double stolen,
                        std::string &reason) {
    const int64_t tau = maxLocalSteps;
    double round = std::max(double(tau) * compute + stolen, comm);
    reason = llvm::formatv(
        "{0}; capped at max-local-steps={1} (beyond it CO2 has no "
        "convergence evidence): a round of {1} steps computes ~{2:f1} ms, "
        "so each waits ~{3:f1} ms for its outer all-reduce; expect ~{4:f0}% "
        "of the throughput without communication (compress the outer round, "
        "raise max-local-steps, or use a faster link)",
        reason.substr(0, reason.rfind("; local-steps=")), tau,
        double(tau) * compute * 1e3,
        std::max(0.0, comm - double(tau) * compute) * 1e3,
        100 * double(tau) * compute / round);
    return tau;
  }

  /// @outer_shard(co2.round, co2.shard_mean) -> co2.shard_out: the outer
  /// step of this rank's slice of shard_elements elements
  /// (loom.co2_outer_shard, state co2.shard.co2_*). Returns the layout
  /// loom.co2 records.
  FailureOr<Shards> buildOuterShard(ModuleOp module, func::FuncOp step,
                                    ArrayRef<ParamOp> trained, int64_t ranks) {
    Type elementType =
        ParamOp(trained.front()).getTensorType().getElementType();
    int64_t elements = 0;
    for (ParamOp p : trained) {
      if (p.getTensorType().getElementType() != elementType) {
        p.emitError("--loom-co2=sharded needs one element type for every "
                    "trained parameter (they are flattened together)");
        return failure();
      }
      elements += p.getTensorType().getNumElements();
    }
    // One more element carries the round's mean loss.
    int64_t shard = (elements + 1 + ranks - 1) / ranks;
    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(step);
    Location loc = step.getLoc();
    auto slice = RankedTensorType::get({shard}, elementType);
    auto fn = func::FuncOp::create(
        b, loc, "outer_shard",
        b.getFunctionType({RankedTensorType::get({}, b.getI64Type()), slice},
                          {slice}));
    fn->setAttr(kEntryAttr, b.getStringAttr("outer_shard"));
    fn.setArgAttr(0, kInputAttr, b.getStringAttr("co2.round"));
    fn.setArgAttr(1, kInputAttr, b.getStringAttr("co2.shard_mean"));
    fn.setResultAttr(0, kOutputAttr, b.getStringAttr("co2.shard_out"));
    Block *body = fn.addEntryBlock();
    b.setInsertionPointToStart(body);
    auto update = CO2OuterShardOp::create(
        b, loc, slice, b.getStringAttr("co2.shard"), body->getArgument(1),
        body->getArgument(0), b.getF64FloatAttr(outerLr),
        b.getF64FloatAttr(outerMomentum), b.getF64FloatAttr(gapPenalty),
        b.getF64FloatAttr(clip));
    func::ReturnOp::create(b, loc, update.getResult());
    SmallVector<Attribute> names;
    for (ParamOp p : trained)
      names.push_back(b.getStringAttr(p.getSymName()));
    Shards shards{b.getArrayAttr(names), shard, {}, {}};
    layOutShards(shards, elements, ranks);
    return shards;
  }

  /// Which slice of the flattened parameters each rank keeps the outer
  /// state of, for the runtime to follow (manifest co2.layout): rank r's
  /// shard starts at r x `shard` (the reduce-scatter and all-gather move
  /// equal shards) and holds up to `shard` parameter elements; the loss
  /// slot follows the last of them, then zero padding.
  static void layOutShards(Shards &shards, int64_t elements, int64_t ranks) {
    for (int64_t r = 0; r < ranks; ++r) {
      int64_t offset = r * shards.elements;
      shards.offsets.push_back(offset);
      shards.sizes.push_back(
          std::clamp<int64_t>(elements - offset, 0, shards.elements));
    }
  }

  /// @outer_step(round, co2.mean:<p>...) { loom.co2_outer per parameter }.
  void buildOuterStep(ModuleOp module, func::FuncOp step,
                      ArrayRef<ParamOp> trained) {
    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(step);
    SmallVector<Type> args{RankedTensorType::get({}, b.getI64Type())};
    for (ParamOp p : trained)
      args.push_back(p.getTensorType());
    auto fn = func::FuncOp::create(b, step.getLoc(), "outer_step",
                                   b.getFunctionType(args, {}));
    fn->setAttr(kEntryAttr, b.getStringAttr("outer_step"));
    fn.setArgAttr(0, kInputAttr, b.getStringAttr("co2.round"));
    for (auto [i, p] : llvm::enumerate(trained))
      fn.setArgAttr(i + 1, kInputAttr,
                    b.getStringAttr("co2.mean:" + ParamOp(p).getSymName()));
    Block *body = fn.addEntryBlock();
    b.setInsertionPointToStart(body);
    for (auto [i, p] : llvm::enumerate(trained))
      CO2OuterOp::create(
          b, step.getLoc(), FlatSymbolRefAttr::get(ParamOp(p).getSymNameAttr()),
          body->getArgument(i + 1), body->getArgument(0),
          b.getF64FloatAttr(outerLr), b.getF64FloatAttr(outerMomentum),
          b.getF64FloatAttr(gapPenalty), b.getF64FloatAttr(clip));
    func::ReturnOp::create(b, step.getLoc());
  }
};

} // namespace

std::unique_ptr<Pass> createCO2Pass(const CO2Options &options) {
  return std::make_unique<CO2Pass>(options);
}

} // namespace mlir::loom
