//===- CostModel.cpp - Compute and communication time estimates -----------===//
#include "passes/Analysis/CostModel.h"

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::loom;

MachineOptions mlir::loom::toMachineOptions(const MachineModel &machine) {
  MachineOptions options;
  options.linkGbps = machine.linkBytesPerSecond * 8 / 1e9;
  options.linkLatencyUs = machine.linkLatencySeconds * 1e6;
  options.gflops = machine.flopsPerSecond / 1e9;
  options.commCpu = machine.commCpuFraction;
  return options;
}

MachineModel mlir::loom::toMachineModel(const MachineOptions &options) {
  MachineModel machine;
  machine.linkBytesPerSecond = options.linkGbps * 1e9 / 8;
  machine.linkLatencySeconds = options.linkLatencyUs * 1e-6;
  machine.flopsPerSecond = options.gflops * 1e9;
  machine.commCpuFraction = options.commCpu;
  return machine;
}

MachineOptions mlir::loom::getMachineOptions(Operation *module) {
  auto attr = module->getAttrOfType<MachineAttr>(kMachineAttr);
  if (!attr)
    return MachineOptions();
  MachineOptions options;
  options.linkGbps = attr.getLinkGbps().getValueAsDouble();
  options.linkLatencyUs = attr.getLinkLatencyUs().getValueAsDouble();
  options.gflops = attr.getGflops().getValueAsDouble();
  options.commCpu = attr.getCommCpu().getValueAsDouble();
  return options;
}

MachineModel mlir::loom::getMachineModel(Operation *module) {
  return toMachineModel(getMachineOptions(module));
}

static double elements(Value v) {
  auto t = dyn_cast<ShapedType>(v.getType());
  return t && t.hasStaticShape() ? double(t.getNumElements()) : 0.0;
}

static double bytes(Value v) {
  auto t = dyn_cast<ShapedType>(v.getType());
  if (!t || !t.hasStaticShape())
    return 0.0;
  return double(t.getNumElements()) * t.getElementTypeBitWidth() / 8;
}

double mlir::loom::estimateFlops(Operation *op) {
  return TypeSwitch<Operation *, double>(op)
      .Case<MatmulOp>([](MatmulOp mm) {
        auto a = cast<RankedTensorType>(mm.getLhs().getType());
        int64_t k = a.getDimSize(a.getRank() - (mm.getTransposeA() ? 2 : 1));
        return 2.0 * elements(mm.getResult()) * double(k);
      })
      .Case<LinearOp>([](LinearOp l) {
        auto w = cast<RankedTensorType>(l.getWeight().getType());
        return 2.0 * elements(l.getResult()) * double(w.getDimSize(1));
      })
      .Case<AttentionOp>([](AttentionOp a) {
        auto q = cast<RankedTensorType>(a.getQuery().getType());
        auto k = cast<RankedTensorType>(a.getKey().getType());
        double rows = elements(a.getQuery()) / double(q.getShape().back());
        double keys = double(k.getDimSize(k.getRank() - 2));
        return 2.0 * rows * keys *
               double(q.getShape().back() +
                      cast<RankedTensorType>(a.getValue().getType())
                          .getShape()
                          .back());
      })
      .Default([](Operation *other) {
        // Elementwise and reductions: a few FLOPs per element touched.
        if (!isa<LoomDialect>(other->getDialect()))
          return 0.0;
        double n = 0;
        for (Value v : other->getOperands())
          n += elements(v);
        return n;
      });
}

double mlir::loom::estimateCollectiveBytes(Operation *op) {
  return TypeSwitch<Operation *, double>(op)
      .Case<comm::AllReduceOp, comm::AllReduceStartOp>([](auto c) {
        double n = double(c.getGroupSize());
        return 2.0 * bytes(c.getInput()) * (n - 1) / n;
      })
      .Case<comm::ReduceScatterOp, comm::ReduceScatterStartOp,
            comm::AllGatherOp, comm::AllGatherStartOp, comm::UnshardOp>(
          [](auto c) {
            double n = double(c.getGroupSize());
            double full = std::max(bytes(c.getInput()),
                                   bytes(c->getResult(c->getNumResults() - 1)));
            return full * (n - 1) / n;
          })
      .Case<comm::BroadcastOp, comm::BroadcastStartOp, comm::SendOp>(
          [](auto c) { return bytes(c.getInput()); })
      .Default([](Operation *) { return 0.0; });
}

double mlir::loom::estimateCollectiveSeconds(Operation *op,
                                             const MachineModel &machine) {
  return machine.linkLatencySeconds +
         estimateCollectiveBytes(op) / machine.linkBytesPerSecond;
}

double mlir::loom::chooseBucketBytes(const MachineModel &machine) {
  double bytes = 8 * machine.linkLatencySeconds * machine.linkBytesPerSecond;
  return std::clamp(bytes, 32.0 * 1024, 25.0 * 1024 * 1024);
}

double mlir::loom::estimateComputeSeconds(Operation *op,
                                          const MachineModel &machine) {
  return estimateFlops(op) / machine.flopsPerSecond;
}
