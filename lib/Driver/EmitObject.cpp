//===- EmitObject.cpp - LLVM dialect module to a shared object ------------===//
//
// Translates the lowered module to LLVM IR, optimises it at -O3 and emits
// objects for the host CPU, then links model.so with `cc -shared`. LLVM
// does the optimisation and code generation of a module on one thread, and
// they are most of a compile, so the module is first cut into parts of
// whole functions (PartitionModule.h), each built on a thread of its own.
// --mlir-timing shows each part's optimisation and code generation under
// emit-shared-object (and with --time-llvm-passes each LLVM pass).
//
//===----------------------------------------------------------------------===//
#include "EmitObject.h"
#include "PartitionModule.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

#include <optional>

using namespace mlir;

static LogicalResult error(const llvm::Twine &msg) {
  llvm::errs() << "loomc: error: " << msg << "\n";
  return failure();
}

/// A target machine for the host CPU, with all its features; one per thread
/// (a TargetMachine is not shared between threads' pass managers).
static std::unique_ptr<llvm::TargetMachine>
createHostMachine(std::string &err) {
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target) {
    err = "no LLVM target for " + triple.str() + ": " + err;
    return nullptr;
  }
  llvm::SubtargetFeatures features;
  for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(name, enabled);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(),
      llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    err = "cannot create a target machine for " + triple.str();
  return machine;
}

/// Times each LLVM pass under a scope (--time-llvm-passes): a pass that runs
/// many times (once per function, in each round of a repeated pipeline) is
/// one entry, its times summed. The pass managers and adaptors that run
/// other passes are not timed themselves, so no time is counted twice.
class LLVMPassTimer {
public:
  explicit LLVMPassTimer(TimingScope &scope) : scope(scope) {}

  void registerCallbacks(llvm::PassInstrumentationCallbacks &callbacks) {
    callbacks.registerBeforeNonSkippedPassCallback(
        [this](StringRef pass, llvm::Any) {
          bool runsOthers =
              pass.contains("PassManager") || pass.contains("Adaptor") ||
              pass.contains("RepeatedPass") || pass.contains("WrapperPass");
          running.push_back(runsOthers ? TimingScope() : scope.nest(pass));
        });
    auto after = [this](StringRef, auto &&...) { running.pop_back(); };
    callbacks.registerAfterPassCallback(after);
    callbacks.registerAfterPassInvalidatedCallback(after);
  }

private:
  TimingScope &scope;
  llvm::SmallVector<TimingScope> running;
};

/// -O3 without loop unrolling. The lowered step is one large function with
/// many small static loops; full unrolling multiplies its size and made
/// IndVarSimplify take most of a minute on a small GPT, for no measurable
/// gain over vectorised loops.
static void optimize(llvm::Module &module, llvm::TargetMachine *machine,
                     TimingScope *passScope) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks callbacks;
  std::optional<LLVMPassTimer> timer;
  if (passScope) {
    timer.emplace(*passScope);
    timer->registerCallbacks(callbacks);
  }
  llvm::PassBuilder pb(machine, tuning, std::nullopt, &callbacks);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

/// Optimises `module` and writes its object to `path`, timed under `scope`.
/// Returns an error message, empty on success.
static std::string buildObject(llvm::Module &module, StringRef path,
                               bool timePasses, TimingScope &scope) {
  std::string err;
  std::unique_ptr<llvm::TargetMachine> machine = createHostMachine(err);
  if (!machine)
    return err;
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(machine->getTargetTriple());
  {
    TimingScope timed = scope.nest("llvm-optimize");
    optimize(module, machine.get(), timePasses ? &timed : nullptr);
  }
  TimingScope timed = scope.nest("llvm-codegen");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return "cannot write " + path.str() + ": " + ec.message();
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return "the target cannot emit object files";
  pm.run(module);
  return "";
}

/// Builds part `i` (bitcode) into `path` in an LLVMContext of its own.
static std::string buildPart(StringRef bitcode, unsigned i, StringRef path,
                             bool timePasses, TimingScope &scope) {
  TimingScope timed = scope.nest("part " + std::to_string(i));
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "part"), context);
  if (!module)
    return "part " + std::to_string(i) + ": " +
           llvm::toString(module.takeError());
  return buildObject(**module, path, timePasses, timed);
}

/// The threads to build on: `requested`, or one per core (0).
static unsigned buildThreads(unsigned requested) {
  return requested ? requested
                   : llvm::hardware_concurrency().compute_thread_count();
}

/// Builds the objects of `module` (one per part) into `dir`; appends their
/// paths to `objects`.
static LogicalResult buildObjects(llvm::Module &module, StringRef dir,
                                  const EmitOptions &options,
                                  TimingScope &scope,
                                  SmallVectorImpl<std::string> &objects) {
  auto objectPath = [&](unsigned i) {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, "model." + std::to_string(i) + ".o");
    return std::string(path);
  };
  SmallVector<std::string> parts;
  {
    TimingScope timed = scope.nest("partition");
    parts = partitionModule(module, buildThreads(options.threads));
  }
  if (parts.empty()) {
    objects.push_back(objectPath(0));
    std::string err =
        buildObject(module, objects.back(), options.timePasses, scope);
    return err.empty() ? success() : error(err);
  }
  SmallVector<std::string> errors(parts.size());
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(parts.size()));
    // Every path before any thread reads one (objects must not grow).
    for (unsigned i = 0; i < parts.size(); ++i)
      objects.push_back(objectPath(i));
    for (unsigned i = 0; i < parts.size(); ++i)
      pool.async([&, i] {
        errors[i] =
            buildPart(parts[i], i, objects[i], options.timePasses, scope);
      });
    pool.wait();
  }
  for (const std::string &err : errors)
    if (!err.empty())
      return error(err);
  return success();
}

/// Links `objects` into `so` with the system's C compiler driver.
static LogicalResult linkSharedObject(ArrayRef<std::string> objects,
                                      StringRef so) {
  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return error("no C compiler driver 'cc' on PATH to link " + so +
                 " (install gcc or clang)");
  SmallVector<StringRef> args{*cc, "-shared", "-o", so};
  args.append(objects.begin(), objects.end());
  args.push_back("-lm");
  std::string linkErr;
  int rc =
      llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &linkErr);
  if (rc != 0)
    return error("linking " + so + " failed (" + *cc + " exited with " +
                 llvm::Twine(rc) + ")" +
                 (linkErr.empty() ? "" : ": " + linkErr));
  for (const std::string &object : objects)
    llvm::sys::fs::remove(object);
  return success();
}

LogicalResult mlir::loom::driver::emitSharedObject(ModuleOp module,
                                                   StringRef dir,
                                                   const EmitOptions &options,
                                                   TimingScope &scope) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    TimingScope timed = scope.nest("translate-to-llvm-ir");
    llvmModule = translateModuleToLLVMIR(module, llvmContext, "loom_model");
  }
  if (!llvmModule)
    return error("translation to LLVM IR failed");

  SmallVector<std::string> objects;
  if (failed(buildObjects(*llvmModule, dir, options, scope, objects)))
    return failure();
  SmallString<256> so(dir);
  llvm::sys::path::append(so, "model.so");
  TimingScope timed = scope.nest("link");
  return linkSharedObject(objects, so);
}
