//===- InitAll.cpp - The one place that lists Loom's components -----------===//
#include "loom/InitAll.h"

#include "dialects/Comm/IR/CommDialect.h"
#include "dialects/Loom/IR/LoomDialect.h"
#include "passes/Analysis/Passes.h"
#include "passes/Bufferize/Passes.h"
#include "passes/CPU/Passes.h"
#include "passes/Distribute/Passes.h"
#include "passes/GPU/Passes.h"
#include "passes/Pipelines/Pipelines.h"
#include "passes/Schedule/Passes.h"
#include "passes/ToLinalg/Passes.h"
#include "passes/Train/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::loom::registerAllDialects(DialectRegistry &registry) {
  registry.insert<LoomDialect, comm::CommDialect>();
  registerCommBufferizationModels(registry);
  registerKernelBufferizationModels(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary and the GPU target's object emission translate
  // gpu/nvvm to LLVM IR inside the pipeline.
  mlir::registerAllToLLVMIRTranslations(registry);
}

void mlir::loom::registerAllPasses() {
  mlir::registerAllPasses();
  registerAnalysisPasses();
  registerTrainPasses();
  registerDistributePasses();
  registerSchedulePasses();
  registerToLinalgPasses();
  registerBufferizePasses();
  registerCPUPasses();
  registerGPUPasses();
  registerPipelines();
}
