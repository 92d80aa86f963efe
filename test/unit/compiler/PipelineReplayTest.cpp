//===- PipelineReplayTest.cpp - loomc's stages replay from their text -----===//
//
// A crash reproducer (loomc --mlir-pass-pipeline-crash-reproducer=FILE,
// replayed by `loom-opt --run-reproducer FILE`) and loomc
// --dump-pass-pipeline give a stage's pass pipeline as text. It reproduces
// loomc only if every pass prints every option it was built with and the
// printed IR parses back to the same module. These tests run each stage of
// loomc, then run the pipeline --dump-pass-pipeline printed on the stage's
// printed input, and compare the two results.
//
//===----------------------------------------------------------------------===//

#include "loom/Driver/Driver.h"
#include "loom/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace mlir;
namespace driver = mlir::loom::driver;
using driver::CompileOptions;
using driver::Stage;

namespace {

/// The IR at the end of `stage`; appends each stage's pass pipeline, as
/// --dump-pass-pipeline prints it, to `pipelines` when given.
std::string compileTo(CompileOptions options, Stage stage,
                      std::vector<std::string> *pipelines = nullptr) {
  std::string ir, diagnostics;
  llvm::raw_string_ostream out(ir), diag(diagnostics);
  options.emitMlir = true;
  options.stage = stage;
  options.printTo = &out;
  options.diagnostics = &diag;
  options.dumpPassPipeline = pipelines != nullptr;
  EXPECT_TRUE(succeeded(driver::compile(options))) << diagnostics;
  if (pipelines) {
    llvm::SmallVector<StringRef> lines;
    StringRef(diagnostics).split(lines, '\n', -1, /*KeepEmpty=*/false);
    for (StringRef line : lines)
      if (line.consume_front("loomc: stage "))
        pipelines->push_back(line.split(": ").second.str());
  }
  return driver::withoutCompileTimes(ir);
}

/// What `loom-opt --pass-pipeline=PIPELINE` prints for `input`.
std::string replay(const std::string &input, StringRef pipeline) {
  DialectRegistry registry;
  loom::registerAllDialects(registry);
  MLIRContext ctx(registry);
  std::string diagnostics;
  llvm::raw_string_ostream diag(diagnostics);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diag << d << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(input, &ctx);
  if (!module) {
    ADD_FAILURE() << "the stage's input does not parse:\n" << diagnostics;
    return "";
  }
  // The text names the pass manager's anchor around the passes:
  // any(...) or builtin.module(...).
  auto [anchor, passes] = pipeline.split('(');
  if (anchor.empty() || !passes.consume_back(")")) {
    ADD_FAILURE() << "not an anchored pipeline: " << pipeline.str();
    return "";
  }
  PassManager pm(&ctx);
  if (failed(parsePassPipeline(passes, pm, diag))) {
    ADD_FAILURE() << "the pipeline does not parse: " << diagnostics;
    return "";
  }
  if (failed(pm.run(*module))) {
    ADD_FAILURE() << "the replayed pipeline fails:\n" << diagnostics;
    return "";
  }
  std::string ir;
  llvm::raw_string_ostream out(ir);
  module->print(out);
  return driver::withoutCompileTimes(ir);
}

/// Compiles with `options` stage by stage and replays each stage.
void expectStagesReplay(const CompileOptions &options) {
  driver::registerPassesOnce();
  std::vector<std::string> pipelines;
  const std::vector<std::string> ir = {
      compileTo(options, Stage::Model), compileTo(options, Stage::Train),
      compileTo(options, Stage::Linalg), compileTo(options, Stage::Bufferized),
      compileTo(options, Stage::Lowered, &pipelines)};
  // train, linalg, bufferized, lowered (the CPU's or the GPU's).
  ASSERT_EQ(pipelines.size(), 4u);
  for (size_t i = 0; i < pipelines.size(); ++i) {
    SCOPED_TRACE("stage " + std::to_string(i + 1) + ": " +
                 pipelines[i].substr(0, 200));
    ASSERT_FALSE(ir[i].empty());
    // A stage that changed nothing would make the comparison vacuous.
    ASSERT_NE(ir[i], ir[i + 1]);
    EXPECT_EQ(replay(ir[i], pipelines[i]), ir[i + 1]);
  }
}

CompileOptions gpt(std::string spec = "vocab=32,seq=8,dim=16,heads=2,"
                                      "layers=1,batch=2") {
  CompileOptions options;
  options.modelSpec = "gpt:" + spec;
  return options;
}

TEST(PipelineReplay, Defaults) {
  CompileOptions options;
  options.modelSpec = "mlp:in=5,hidden=7,out=3,layers=2,batch=4";
  expectStagesReplay(options);
}

TEST(PipelineReplay, OverlappedDataParallelSgdWithSchedule) {
  CompileOptions options = gpt();
  options.optimizer = "sgd:lr=0.05,momentum=0.9,wd=0.01";
  options.dp = 2;
  options.overlap = true;
  options.bucketMiB = 0.001;
  options.warmupSteps = 3;
  options.decaySteps = 10;
  options.minLr = 0.001;
  options.clipNorm = 0.5;
  expectStagesReplay(options);
}

TEST(PipelineReplay, ShardedCO2Bf16) {
  CompileOptions options = gpt();
  options.optimizer = "adamw:lr=0.003,beta1=0.8,beta2=0.95,eps=1e-6,wd=0.1";
  options.dp = 4;
  options.co2 = "local-steps=5,outer-lr=0.7,outer-momentum=0.3,"
                "gap-penalty=1.5,clip=2,sharded=1";
  options.precision = "bf16";
  expectStagesReplay(options);
}

TEST(PipelineReplay, GpuLoopsOnTheCpuWithoutPlannedBuffers) {
  CompileOptions options = gpt();
  options.emulateGpuLoops = true;
  options.planBuffers = false;
  options.lateFrees = true;
  options.dtype = "f64";
  expectStagesReplay(options);
}

TEST(PipelineReplay, Cuda) {
  // ptxas turns the kernels' PTX into cubins (lit's cuda-toolkit feature).
  if (!llvm::sys::fs::exists("/usr/local/cuda/bin/ptxas"))
    GTEST_SKIP() << "no CUDA toolkit";
  CompileOptions options;
  options.modelSpec = "mlp:in=5,hidden=7,out=3,layers=2,batch=4";
  options.target = "cuda";
  options.precision = "bf16";
  options.cudaChip = "sm_80";
  expectStagesReplay(options);
}

} // namespace
