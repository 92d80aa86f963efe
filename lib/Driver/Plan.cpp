//===- Plan.cpp - loomc --plan: the layouts of a model on a cluster ------===//
//
// Enumerates the layouts of the --model on the --cluster's ranks (data and
// tensor parallelism, ZeRO stage, overlap), compiles each to the train
// stage, and predicts from that IR what loom-run would report: the model's
// memory per rank exactly (PlanPredict.cpp), and the step time from the
// cost model with each collective on the link its group spans. Prints the
// layouts ranked, says why the first one wins, and with -o compiles it.
//
//===----------------------------------------------------------------------===//
#include "Compilation.h"
#include "PlanPredict.h"

#include "loom/Driver/MachineSpec.h"
#include "loom/Driver/Specs.h"

#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::driver;

namespace {

/// `text` (a gpt: or mlp: spec, presets expanded) with its batch field set
/// to `batch`.
std::string withBatch(StringRef text, int64_t batch) {
  auto [kind, fields] = text.split(':');
  std::string out = (kind + ":").str();
  SmallVector<StringRef> items;
  fields.split(items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef item : items)
    if (!item.starts_with("batch="))
      out += (item + ",").str();
  return out + "batch=" + std::to_string(batch);
}

/// The --link spec of `machine`'s link (a bare number is Gbit/s, us).
std::string linkSpec(const MachineModel &machine) {
  return llvm::formatv("bw={0},lat={1}", machine.linkBytesPerSecond * 8 / 1e9,
                       machine.linkLatencySeconds * 1e6)
      .str();
}

/// The micro-batch counts tried for `pp` stages over `rows` rows per
/// data-parallel rank: P, 2P and 4P (1F1B's bubble (P-1)/(M+P-1) from a
/// half to a fifth) where they divide the rows, and micro-batches of one
/// row (Megatron-LM's and the Frontier study's choice: the smallest
/// bubble, the least activation memory); 1 without a pipeline.
std::vector<int64_t> microBatchCounts(int64_t pp, int64_t rows) {
  if (pp == 1)
    return {1};
  std::vector<int64_t> counts;
  for (int64_t m : {pp, 2 * pp, 4 * pp, rows})
    if (rows % m == 0 && !llvm::is_contained(counts, m))
      counts.push_back(m);
  return counts;
}

/// Every layout of `ranks` ranks the model allows: tp divides `units`
/// (heads or hidden units), dp the global batch, pp is at most the layers
/// and M divides the rows of a data-parallel rank; ZeRO stages and overlap
/// where there is data parallelism (stage 3 with data parallelism alone:
/// it does not combine with tp or pp yet).
std::vector<Layout> enumerateLayouts(int64_t ranks, int64_t units,
                                     int64_t batch, int64_t layers,
                                     std::vector<std::string> &skipped) {
  std::vector<Layout> layouts;
  for (int64_t pp = 1; pp <= std::min(ranks, layers); ++pp)
    for (int64_t tp = 1; pp * tp <= ranks; ++tp) {
      if (ranks % (pp * tp))
        continue;
      const int64_t dp = ranks / (pp * tp);
      if (units % tp) {
        skipped.push_back(llvm::formatv("tp={0}: {1} does not divide the "
                                        "model's {2} heads (or hidden units)",
                                        tp, tp, units));
        continue;
      }
      if (batch % dp) {
        skipped.push_back(llvm::formatv("dp={0}: {1} does not divide the "
                                        "global batch of {2} rows",
                                        dp, dp, batch));
        continue;
      }
      const bool alone = tp == 1 && pp == 1;
      for (int64_t micro : microBatchCounts(pp, batch / dp))
        for (int64_t zero = 0; zero <= (dp == 1 ? 0 : alone ? 3 : 2); ++zero)
          for (bool overlap : {false, true})
            if (!overlap || dp > 1)
              layouts.push_back({dp, tp, zero, overlap, pp, micro});
    }
  return layouts;
}

/// The options that compile `layout` of `base`'s model on `cluster`: the
/// per-rank batch, and the data-parallel group's link for the cost model.
/// `oneMicroBatch`: a pipeline's step of one micro-batch, whose costs the
/// prediction scales to the layout's M (a step of M micro-batches is M
/// copies of the same forward and backward passes).
CompileOptions layoutOptions(const CompileOptions &base, StringRef model,
                             int64_t batch, const Layout &layout,
                             const ClusterSpec &cluster,
                             bool oneMicroBatch = false) {
  CompileOptions o = base;
  o.plan = false;
  o.clusterSpec.clear();
  const bool one = oneMicroBatch && layout.pp > 1;
  o.modelSpec = withBatch(model, batch / layout.dp / (one ? layout.micro : 1));
  o.dp = layout.dp;
  o.tp = layout.tp;
  o.zero = layout.zero;
  o.overlap = layout.overlap;
  o.pp = layout.pp;
  o.microBatches = one ? 1 : layout.micro;
  const MachineModel &link = groupSpansNodes(layout, MeshAxis::DP, cluster)
                                 ? cluster.inter
                                 : cluster.intra;
  o.linkSpec = linkSpec(link);
  o.calibrationFile.clear();
  o.givenFlags = {"dp", "tp", "link"};
  if (layout.zero)
    o.givenFlags.push_back("zero");
  if (layout.pp > 1)
    o.givenFlags.insert(o.givenFlags.end(), {"pp", "micro-batches"});
  return o;
}

/// Compiles `options` to the train stage and predicts its step.
FailureOr<Prediction> predictLayout(CompileOptions options,
                                    const ClusterSpec &cluster,
                                    const Layout &layout) {
  // The train stage's IR, which nothing prints.
  options.emitMlir = true;
  options.stage = Stage::Train;
  Compilation c(options);
  if (failed(validate(c)))
    return failure();
  CompileContext context(c);
  OwningOpRef<ModuleOp> module = loadModule(c, context);
  if (!module)
    return failure();
  DefaultTimingManager timing;
  TimingScope root = timing.getRootScope();
  if (failed(runStages(c, *module, root, Stage::Train)))
    return failure();
  return predict(*module, layout, cluster);
}

std::string mib(double bytes) {
  return llvm::formatv("{0:f1}", bytes / (1024.0 * 1024)).str();
}

void printTable(llvm::raw_ostream &os, ArrayRef<Prediction> ranked,
                const ClusterSpec &cluster) {
  os << llvm::formatv("{0,-30} {1,9} {2,9} {3,9} {4,9} {5,9} {6,11} {7,9} "
                      "{8,9} {9,9}  {10}\n",
                      "layout", "step ms", "compute", "tp comm", "bubble",
                      "dp comm", "dp exposed", "params", "grads", "state",
                      "fits");
  for (const Prediction &p : ranked)
    os << llvm::formatv(
        "{0,-30} {1,9:f2} {2,9:f2} {3,9:f2} {4,9:f2} {5,9:f2} {6,11:f2} {7,9} "
        "{8,9} {9,9}  {10}\n",
        p.layout.describe(), p.stepSeconds * 1e3, p.computeSeconds * 1e3,
        p.tpSeconds * 1e3, p.ppSeconds * 1e3, p.dpSeconds * 1e3,
        p.dpExposedSeconds * 1e3, mib(p.paramBytes), mib(p.gradBytes),
        mib(p.stateBytes),
        cluster.memoryBytes <= 0 ? std::string("-")
        : p.fits(cluster)        ? std::string("yes")
                                 : "no (" + mib(p.totalBytes()) + " MiB)");
  os << "(times per step in ms; memory per rank in MiB as loom-run reports "
        "it, besides the step's temporaries: activations about "
     << mib(ranked.empty() ? 0 : ranked.front().activationBytes)
     << " MiB for the first)\n";
}

/// Every layout of the model on `cluster` compiled and predicted, fastest
/// first among those that fit, then those that do not; `skipped` gets the
/// layouts the model does not allow.
FailureOr<std::vector<Prediction>>
rankLayouts(const CompileOptions &options, const ModelSpec &spec,
            const ClusterSpec &cluster, std::vector<std::string> &skipped) {
  const int64_t batch = spec.batch();
  std::vector<Prediction> predictions;
  for (const Layout &layout : enumerateLayouts(
           cluster.ranks(), spec.splitUnits(), batch, spec.layers(), skipped)) {
    FailureOr<Prediction> p =
        predictLayout(layoutOptions(options, spec.text, batch, layout, cluster,
                                    /*oneMicroBatch=*/true),
                      cluster, layout);
    if (failed(p))
      return Compilation(options).error("could not compile layout " +
                                        layout.describe());
    predictions.push_back(*p);
  }
  std::stable_sort(predictions.begin(), predictions.end(),
                   [&](const Prediction &a, const Prediction &b) {
                     if (a.fits(cluster) != b.fits(cluster))
                       return a.fits(cluster);
                     return a.stepSeconds < b.stepSeconds;
                   });
  return predictions;
}

} // namespace

LogicalResult mlir::loom::driver::plan(const CompileOptions &options) {
  Compilation check(options);
  if (options.modelSpec.empty())
    return check.error("--plan needs --model=SPEC: it chooses the per-rank "
                       "batch of each layout from the spec's global batch");
  for (const char *flag :
       {"dp", "tp", "pp", "micro-batches", "zero", "overlap", "emit", "stage"})
    if (check.given(flag))
      return check.error(llvm::Twine("--plan chooses the layout: --") + flag +
                         " does not apply");
  auto spec = parseModelSpec(options.modelSpec);
  if (!spec)
    return check.error(llvm::toString(spec.takeError()));
  MachineModel base;
  auto cluster = parseClusterSpec(options.clusterSpec, base);
  if (!cluster)
    return check.error(llvm::toString(cluster.takeError()));
  const int64_t batch = spec->batch();
  registerPassesOnce();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> skipped;
  FailureOr<std::vector<Prediction>> ranked =
      rankLayouts(options, *spec, *cluster, skipped);
  if (failed(ranked))
    return failure();
  std::vector<Prediction> &predictions = *ranked;
  if (predictions.empty())
    return check.error("no layout of " + llvm::Twine(cluster->ranks()) +
                       " ranks fits this model: " + llvm::join(skipped, "; "));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("loomc: plan for {0} on {1} node(s) x {2} rank(s): "
                      "within a node {3}; between nodes {4}; {5}\n",
                      spec->text, cluster->nodes, cluster->ranksPerNode,
                      describe(cluster->intra), describe(cluster->inter),
                      cluster->memoryBytes > 0
                          ? mib(cluster->memoryBytes) + " MiB per rank"
                          : std::string("no memory limit"));
  printTable(os, predictions, *cluster);
  for (const std::string &why : skipped)
    os << "not considered: " << why << "\n";
  const Prediction &best = predictions.front();
  if (!best.fits(*cluster)) {
    double least = best.totalBytes();
    for (const Prediction &p : predictions)
      least = std::min(least, p.totalBytes());
    return check.error("no layout fits in " + mib(cluster->memoryBytes) +
                       " MiB per rank (the smallest needs " + mib(least) +
                       " MiB)");
  }
  os << "winner: " << best.layout.describe() << ": " << best.reason(*cluster)
     << llvm::formatv(" ({0} layouts in {1:f1} s)\n", predictions.size(),
                      seconds);
  // In the names of loom-run's --metrics summary, which reports them.
  os << llvm::formatv("winner memory per rank: param_bytes={0} "
                      "grad_bytes={1} optimizer_state_bytes={2}\n",
                      int64_t(best.paramBytes), int64_t(best.gradBytes),
                      int64_t(best.stateBytes));
  if (options.outputDir.empty())
    return success();
  CompileOptions winner =
      layoutOptions(options, spec->text, batch, best.layout, *cluster);
  os << "compiling " << best.layout.describe() << " into " << options.outputDir
     << " (loom-run it with --ranks " << cluster->ranks() << ")\n";
  os.flush();
  return compile(winner);
}
