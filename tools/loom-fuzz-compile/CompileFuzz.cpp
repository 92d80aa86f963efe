//===- CompileFuzz.cpp - Fuzz target of the whole compiler ------*- C++ -*-===//
//
// Reliability scenario 16: parse -> verify -> every pipeline of loomc, on
// untrusted IR. An input is a model (or a training step, as printed by
// `loomc --stage=train`) in MLIR text, whose first line may give loomc's
// flags as a comment:
//
//   // flags: --dp=2 --co2=local-steps=2
//   module attributes {loom.task = ...} { ... }
//
// The line is a comment, so `loomc INPUT --emit=mlir -o /dev/null FLAGS`
// replays an input exactly; unknown flags are ignored, bad values are
// loomc's own errors. The input is compiled in memory up to the lowered
// LLVM-dialect module, which is printed to /dev/null (no object file, no
// artifact).
//
// The compiler may accept or reject an input; what it may not do (the
// rules of test/robustness/Inputs/mutate_ir.py) is crash, abort, fail
// without an error, or reject the IR with an error that points nowhere: an
// error diagnostic must be located in the input (FILE:line:col), a
// failure without one must print one of loomc's own errors, and the IR
// must verify after every pass (a pass that breaks it is a bug, not a
// rejection); an input that compiles must compile to the same text again.
// A violation
// aborts, which libFuzzer or FuzzMain.cpp reports as a crash and saves the
// input. LOOM_FUZZ_VERBOSE=1 prints each input's flags and diagnostics (to
// replay one).
//
// Built with clang and LOOM_FUZZ_COMPILER=ON the passes are instrumented
// for coverage and ASan/UBSan; with g++ the passes are not and only this
// file is (tools/loom-fuzz-compile/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "IrMutator.h"

#include "loom/Driver/Driver.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBufferRef.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>

using namespace mlir::loom::driver;

namespace {

/// The name diagnostics give the input.
constexpr const char *kInputName = "fuzz-input.mlir";

bool verbose() {
  static const bool on = [] {
    const char *value = std::getenv("LOOM_FUZZ_VERBOSE");
    return value && *value && std::string(value) != "0";
  }();
  return on;
}

[[noreturn]] void violated(const std::string &what,
                           const std::string &diagnostics) {
  std::fprintf(stderr, "fuzz check failed: %s\n%s\n", what.c_str(),
               diagnostics.c_str());
  std::abort();
}

/// Sets the options the `// flags:` line names. Only loomc's flags that
/// change what is compiled are read; a value that does not parse leaves the
/// default.
void applyFlags(llvm::StringRef line, CompileOptions &options) {
  llvm::SmallVector<llvm::StringRef> words;
  line.split(words, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef word : words) {
    auto [flag, value] = word.split('=');
    if (flag == "--dp") {
      int64_t dp;
      // A job of millions of ranks is legal but not what a fuzz input
      // should spend its time on.
      if (!value.getAsInteger(10, dp) && dp <= 64)
        options.dp = dp;
    } else if (flag == "--overlap") {
      options.overlap = true;
    } else if (flag == "--co2") {
      options.co2 = value.str();
    } else if (flag == "--precision") {
      options.precision = value.str();
    } else if (flag == "--optimizer") {
      options.optimizer = value.str();
    } else if (flag == "--clip-norm") {
      value.getAsDouble(options.clipNorm);
    } else if (flag == "--warmup-steps") {
      value.getAsInteger(10, options.warmupSteps);
    } else if (flag == "--decay-steps") {
      value.getAsInteger(10, options.decaySteps);
    } else if (flag == "--min-lr") {
      value.getAsDouble(options.minLr);
    } else if (flag == "--bucket-mib") {
      value.getAsDouble(options.bucketMiB);
    } else if (flag == "--target") {
      options.target = value.str();
    } else if (flag == "--emulate-gpu-loops") {
      options.emulateGpuLoops = true;
    } else if (flag == "--late-frees") {
      options.lateFrees = true;
    } else if (flag == "--plan-buffers") {
      options.planBuffers = value != "0" && value != "false";
    }
  }
}

/// Whether `loc` points into the input, as the printer finds the place
/// (through names, call sites, fusions). Line 0 is the module the parser
/// makes around top-level ops: an error about the whole input.
bool locatedInInput(mlir::Location loc) {
  if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc))
    return file.getFilename() == kInputName;
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc))
    return locatedInInput(name.getChildLoc());
  if (auto call = mlir::dyn_cast<mlir::CallSiteLoc>(loc))
    return locatedInInput(call.getCallee());
  if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc))
    return llvm::any_of(fused.getLocations(), locatedInInput);
  if (auto opaque = mlir::dyn_cast<mlir::OpaqueLoc>(loc))
    return locatedInInput(opaque.getFallbackLocation());
  return false;
}

/// Verifies the IR after every pass in place of the pass manager's own
/// verifier, which reports a pass that breaks the IR as an error at the
/// broken op, just like an input the compiler rejects. Here it is a bug.
class VerifyEachPass : public mlir::PassInstrumentation {
public:
  explicit VerifyEachPass(std::string &diagnostics)
      : diagnostics(diagnostics) {}

  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    if (mlir::succeeded(mlir::verify(op)))
      return;
    violated(("the IR after " + pass->getArgument() + " (" + pass->getName() +
              ") does not verify")
                 .str(),
             diagnostics);
  }

private:
  std::string &diagnostics;
};

/// What one compile of an input gave.
struct Compiled {
  bool failed;
  std::string diagnostics; ///< as loomc prints them
  std::string output;      ///< the lowered module, if it compiled
};

/// Compiles `input` in memory and checks how the compiler behaved.
Compiled compileChecked(const std::string &input) {
  CompileOptions options;
  options.inputText = input;
  options.inputFile = kInputName;
  options.emitMlir = true;
  llvm::StringRef first = llvm::StringRef(input).split('\n').first;
  if (first.consume_front(mlir::loom::fuzz::kFlagsPrefix))
    applyFlags(first, options);

  Compiled result;
  llvm::raw_string_ostream os(result.diagnostics), out(result.output);
  options.diagnostics = &os;
  options.printTo = &out;
  // Errors are checked as they come, not in the printed text, which quotes
  // the input: the fuzzer soon learns to write "loomc: error: " into it.
  int errors = 0;
  std::string unlocated; // the first error that points nowhere
  options.onDiagnostic = [&](mlir::Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() != mlir::DiagnosticSeverity::Error)
      return;
    ++errors;
    if (unlocated.empty() && !locatedInInput(diagnostic.getLocation()))
      unlocated = diagnostic.str();
  };
  options.configurePasses = [&](mlir::PassManager &pm) {
    pm.enableVerifier(false);
    pm.addInstrumentation(std::make_unique<VerifyEachPass>(result.diagnostics));
  };
  result.failed = mlir::failed(compile(options));
  if (verbose())
    std::fprintf(stderr, "loom-fuzz-compile: %s: %s\n%s",
                 result.failed ? "rejected" : "compiled", first.str().c_str(),
                 result.diagnostics.c_str());
  if (!unlocated.empty())
    violated("an error that names no place in the input: " + unlocated,
             result.diagnostics);
  // A failure without an error about the IR must be one of loomc's own.
  // (Only a warning could quote the input here; none is expected.)
  if (result.failed && !errors &&
      !llvm::StringRef(result.diagnostics).contains("loomc: error: "))
    violated("the compiler failed without an error", result.diagnostics);
  return result;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  registerPassesOnce();
  // One thread: every input gets a new context, and a thread pool per
  // context would cost more than most inputs take to compile.
  mlir::registerMLIRContextCLOptions();
  const char *args[] = {"loom-fuzz-compile", "--mlir-disable-threading"};
  llvm::cl::ParseCommandLineOptions(2, args);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string input(reinterpret_cast<const char *>(data), size);
  // Bytecode is read by a forked child (loom/Support/IsolatedBytecode.h,
  // fuzzed by test/tools/loom-opt/bytecode.test) whose errors carry the
  // locations written into it, none in this input: this target is the text
  // path.
  if (mlir::isBytecode(llvm::MemoryBufferRef(input, kInputName)))
    return 0;
  Compiled first = compileChecked(input);
  if (first.failed)
    return 0;
  // The same input compiles to the same program: ranks that compile their
  // own copy of a model must agree on the artifact (its hash is compared at
  // startup), and iteration over pointer-keyed maps is the classic way to
  // lose that. A second context allocates at other addresses.
  Compiled second = compileChecked(input);
  first.output = withoutCompileTimes(first.output);
  second.output = withoutCompileTimes(second.output);
  if (second.failed || second.output != first.output) {
    size_t at = std::mismatch(first.output.begin(), first.output.end(),
                              second.output.begin(), second.output.end())
                    .first -
                first.output.begin();
    size_t line =
        std::count(first.output.begin(), first.output.begin() + at, '\n') + 1;
    violated("two compiles of the same input differ (first at line " +
                 std::to_string(line) + " of the lowered module)",
             second.diagnostics);
  }
  return 0;
}

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

/// Mostly edits of the IR (IrMutator.h: what the verifiers and passes see),
/// sometimes byte-level mutations (what the parser sees).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  std::mt19937_64 random(seed);
  if (random() % 4 == 0)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string text(reinterpret_cast<const char *>(data), size);
  for (uint64_t i = 0, edits = 1 + random() % 3; i < edits; ++i)
    text = mlir::loom::fuzz::mutateIr(text, random);
  size = std::min(text.size(), maxSize);
  std::memcpy(data, text.data(), size);
  return size;
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
                                            const uint8_t *data2, size_t size2,
                                            uint8_t *out, size_t maxOutSize,
                                            unsigned int seed) {
  std::mt19937_64 random(seed);
  std::string mixed = mlir::loom::fuzz::crossOverIr(
      std::string(reinterpret_cast<const char *>(data1), size1),
      std::string(reinterpret_cast<const char *>(data2), size2), random);
  size_t size = std::min(mixed.size(), maxOutSize);
  std::memcpy(out, mixed.data(), size);
  return size;
}
