//===- EmitObject.cpp - LLVM dialect module to a shared object ------------===//
#include "EmitObject.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

static LogicalResult error(const llvm::Twine &msg) {
  llvm::errs() << "loomc: error: " << msg << "\n";
  return failure();
}

/// -O3 without loop unrolling. The lowered step is one large function with
/// many small static loops; full unrolling multiplies its size and made
/// IndVarSimplify take most of a minute on a small GPT, for no measurable
/// gain over vectorised loops.
static void optimize(llvm::Module &module, llvm::TargetMachine *machine) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(machine, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

LogicalResult mlir::loom::driver::emitSharedObject(ModuleOp module,
                                                   StringRef dir) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "loom_model");
  if (!llvmModule)
    return error("translation to LLVM IR failed");

  std::string triple = llvm::sys::getDefaultTargetTriple();
  llvm::Triple targetTriple(triple);
  std::string err;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(targetTriple, err);
  if (!target)
    return error("no LLVM target for " + triple + ": " + err);
  llvm::SubtargetFeatures features;
  for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(name, enabled);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      targetTriple, llvm::sys::getHostCPUName(), features.getString(), options,
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return error("cannot create a target machine for " + triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(targetTriple);

  optimize(*llvmModule, machine.get());

  SmallString<256> objPath(dir), soPath(dir);
  llvm::sys::path::append(objPath, "model.o");
  llvm::sys::path::append(soPath, "model.so");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objPath, ec, llvm::sys::fs::OF_None);
    if (ec)
      return error("cannot write " + objPath + ": " + ec.message());
    llvm::legacy::PassManager pm;
    if (machine->addPassesToEmitFile(pm, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return error("the target cannot emit object files");
    pm.run(*llvmModule);
  }

  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return error("no C compiler driver 'cc' on PATH to link " + soPath +
                 " (install gcc or clang)");
  SmallVector<StringRef> args{*cc, "-shared", "-o", soPath, objPath, "-lm"};
  std::string linkErr;
  int rc =
      llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &linkErr);
  if (rc != 0)
    return error("linking " + soPath + " failed (" + *cc + " exited with " +
                 llvm::Twine(rc) + ")" +
                 (linkErr.empty() ? "" : ": " + linkErr));
  llvm::sys::fs::remove(objPath);
  return success();
}
