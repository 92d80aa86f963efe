//===- MachineSpec.cpp - Where the cost model's numbers come from ---------===//
#include "loom/Driver/MachineSpec.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;

static llvm::Error specError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// `text` = number + one of `units` (suffix, factor); a bare number takes
/// `bareFactor`. Returns a negative value when malformed.
static double parseQuantity(StringRef text,
                            ArrayRef<std::pair<StringRef, double>> units,
                            double bareFactor) {
  text = text.trim();
  double factor = bareFactor;
  for (auto [suffix, scale] : units)
    if (text.consume_back_insensitive(suffix)) {
      factor = scale;
      break;
    }
  double value;
  if (text.empty() || text.getAsDouble(value) || !std::isfinite(value) ||
      value <= 0)
    return -1;
  return value * factor;
}

/// A bandwidth in bytes per second ("bit" units are bits on the wire, a
/// bare number Gbit/s); negative when malformed.
static double parseBandwidth(StringRef text) {
  return parseQuantity(text,
                       {{"gbit", 1e9 / 8},
                        {"mbit", 1e6 / 8},
                        {"kbit", 1e3 / 8},
                        {"gbps", 1e9 / 8},
                        {"mbps", 1e6 / 8}},
                       1e9 / 8);
}

/// A latency in seconds (a bare number: microseconds); negative when
/// malformed.
static double parseLatency(StringRef text) {
  return parseQuantity(text, {{"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}}, 1e-6);
}

llvm::Error mlir::loom::applyLinkSpec(StringRef spec, MachineModel &machine) {
  if (spec.trim().empty())
    return specError("--link is empty; expected e.g. bw=1gbit,lat=50us");
  SmallVector<StringRef> items;
  spec.split(items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    if (key == "bw") {
      double bps = parseBandwidth(value);
      if (bps <= 0)
        return specError("--link: bad bandwidth '" + value +
                         "' (e.g. bw=10gbit, bw=100mbit, bw=0.5 for Gbit/s)");
      machine.linkBytesPerSecond = bps;
    } else if (key == "lat") {
      double seconds = parseLatency(value);
      if (seconds <= 0)
        return specError("--link: bad latency '" + value +
                         "' (e.g. lat=50us, lat=2ms, lat=80 for microseconds)");
      machine.linkLatencySeconds = seconds;
    } else {
      return specError("--link: unknown key '" + key +
                       "' (known: bw=<rate>, lat=<time>)");
    }
  }
  return llvm::Error::success();
}

llvm::Error mlir::loom::applyCalibrationFile(StringRef path,
                                             MachineModel &machine,
                                             int64_t &ranks) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return specError("cannot read calibration file '" + path +
                     "': " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*buffer)->getBuffer());
  if (!parsed)
    return specError("calibration file '" + path +
                     "' is not JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root || root->getString("format") != "loom-calibration")
    return specError("'" + path +
                     "' is not a calibration file (write one with "
                     "`loom-run --calibrate FILE`)");
  if (root->getInteger("version") != 1)
    return specError("calibration file '" + path +
                     "' has an unknown version (this loomc reads version 1)");
  auto positive = [&](StringRef key) -> std::optional<double> {
    std::optional<double> v = root->getNumber(key);
    if (v && (!std::isfinite(*v) || *v <= 0))
      return std::nullopt;
    return v;
  };
  std::optional<double> gflops = positive("gemm_gflops");
  if (!gflops)
    return specError("calibration file '" + path +
                     "' lacks a positive \"gemm_gflops\"");
  machine.flopsPerSecond = *gflops * 1e9;
  ranks = root->getInteger("ranks").value_or(1);
  if (ranks > 1) {
    std::optional<double> gbps = positive("link_gbps");
    std::optional<double> latencyUs = root->getNumber("link_latency_us");
    if (!gbps || !latencyUs || *latencyUs < 0)
      return specError("calibration file '" + path + "' was measured on " +
                       llvm::Twine(ranks) +
                       " ranks but lacks \"link_gbps\"/\"link_latency_us\"");
    machine.linkBytesPerSecond = *gbps * 1e9 / 8;
    machine.linkLatencySeconds = *latencyUs * 1e-6;
    // Optional: files written before it was measured keep the default.
    if (std::optional<double> cpu = root->getNumber("comm_cpu_fraction")) {
      if (!std::isfinite(*cpu) || *cpu < 0 || *cpu > 1)
        return specError("calibration file '" + path +
                         "': \"comm_cpu_fraction\" must be in [0, 1]");
      machine.commCpuFraction = *cpu;
    }
  }
  return llvm::Error::success();
}

std::string mlir::loom::describe(const MachineModel &machine) {
  return llvm::formatv("link {0:f3} Gbit/s, latency {1:f1} us, compute {2:f1} "
                       "GFLOP/s",
                       machine.linkBytesPerSecond * 8 / 1e9,
                       machine.linkLatencySeconds * 1e6,
                       machine.flopsPerSecond / 1e9)
      .str();
}

llvm::Expected<ClusterSpec>
mlir::loom::parseClusterSpec(StringRef spec, const MachineModel &base) {
  ClusterSpec cluster;
  cluster.intra = cluster.inter = base;
  if (spec.trim().empty())
    return specError("--cluster is empty; expected e.g. nodes=2,"
                     "ranks-per-node=2,intra-bw=10gbit,inter-bw=1gbit");
  SmallVector<StringRef> items;
  spec.split(items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    auto bad = [&](StringRef example) {
      return specError("--cluster: bad " + key + " '" + value + "' (e.g. " +
                       key + "=" + example + ")");
    };
    int64_t count = 0;
    if (key == "nodes" || key == "ranks-per-node") {
      if (value.getAsInteger(10, count) || count < 1 || count > 1 << 20)
        return bad("2");
      (key == "nodes" ? cluster.nodes : cluster.ranksPerNode) = count;
    } else if (key == "intra-calibration" || key == "inter-calibration") {
      // A `loom-run --calibrate` file measured on that level's ranks: its
      // link, and the compute rate and communication share of the ranks.
      MachineModel &link =
          key == "intra-calibration" ? cluster.intra : cluster.inter;
      int64_t ranks = 1;
      if (llvm::Error err = applyCalibrationFile(value, link, ranks))
        return specError("--cluster: " + llvm::toString(std::move(err)));
      if (ranks < 2)
        return specError("--cluster: " + key + " '" + value +
                         "' was measured on one rank, so it has no link; "
                         "calibrate on two ranks of that level");
      cluster.intra.flopsPerSecond = cluster.inter.flopsPerSecond =
          link.flopsPerSecond;
    } else if (key.ends_with("-bw") || key.ends_with("-lat")) {
      // intra-* or inter-*: the link's bandwidth or latency, as --link's.
      MachineModel *link = key.starts_with("intra-")   ? &cluster.intra
                           : key.starts_with("inter-") ? &cluster.inter
                                                       : nullptr;
      const bool bw = key.ends_with("-bw");
      double parsed = bw ? parseBandwidth(value) : parseLatency(value);
      if (!link || key.size() != (bw ? 8 : 9))
        return specError("--cluster: unknown key '" + key + "'");
      if (parsed <= 0)
        return bad(bw ? "10gbit" : "50us");
      (bw ? link->linkBytesPerSecond : link->linkLatencySeconds) = parsed;
    } else if (key == "memory") {
      cluster.memoryBytes = parseQuantity(value,
                                          {{"kib", 1024.0},
                                           {"mib", 1024.0 * 1024},
                                           {"gib", 1024.0 * 1024 * 1024}},
                                          1.0);
      if (cluster.memoryBytes <= 0)
        return bad("16GiB");
    } else if (key == "comm-cpu") {
      double share = -1;
      if (value.getAsDouble(share) || share < 0 || share > 1)
        return bad("0.2");
      cluster.intra.commCpuFraction = cluster.inter.commCpuFraction = share;
    } else if (key == "gflops") {
      double gflops = parseQuantity(value, {}, 1e9);
      if (gflops <= 0)
        return bad("50");
      cluster.intra.flopsPerSecond = cluster.inter.flopsPerSecond = gflops;
    } else {
      return specError("--cluster: unknown key '" + key +
                       "' (known: nodes, ranks-per-node, intra-bw, "
                       "intra-lat, inter-bw, inter-lat, intra-calibration, "
                       "inter-calibration, memory, gflops, comm-cpu)");
    }
  }
  return cluster;
}
