//===- Specs.h - `--model` and `--optimizer` spec strings -------*- C++ -*-===//
#ifndef LOOM_DRIVER_SPECS_H
#define LOOM_DRIVER_SPECS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::loom::driver {

/// `mlp:in=I,hidden=H,out=O,layers=L,batch=B`: L linear layers, the first
/// L-1 followed by ReLU, classifying I features into O classes.
struct MlpSpec {
  int64_t in = 16, hidden = 64, out = 4, layers = 2, batch = 32;
};

/// `gpt:vocab=V,seq=T,dim=D,heads=NH,layers=L,batch=B`: nanoGPT.
struct GptSpec {
  int64_t vocab = 256, seq = 64, dim = 64, heads = 4, layers = 2, batch = 4;
};

struct ModelSpec {
  enum class Kind { Mlp, Gpt } kind = Kind::Mlp;
  MlpSpec mlp;
  GptSpec gpt;
  std::string text; ///< The spec as given, for the manifest.
};

/// `adamw:lr=..,beta1=..,beta2=..,eps=..,wd=..` or
/// `sgd:lr=..,momentum=..,wd=..`.
struct OptimizerSpec {
  std::string kind = "adamw";
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = 0.01;
  double momentum = 0.0;
};

/// `local-steps=N|auto,outer-lr=..,outer-momentum=..,gap-penalty=..,clip=..,
/// sharded=0|1` (`--co2=...`; docs/co2.md). localSteps 0 is `auto`.
struct CO2Spec {
  int64_t localSteps = 12;
  // Defaults from the convergence sweep in bench/RESULTS.md.
  double outerLr = 0.8, outerMomentum = 0.0, gapPenalty = 2.0, clip = 1.0;
  bool sharded = false;
};

/// Parse errors name the offending field, e.g.
/// `--model: field 'hiden' is not one of in, hidden, out, layers, batch`.
llvm::Expected<ModelSpec> parseModelSpec(llvm::StringRef text);
llvm::Expected<OptimizerSpec> parseOptimizerSpec(llvm::StringRef text);
llvm::Expected<CO2Spec> parseCO2Spec(llvm::StringRef text);

/// loomc's help for --model: each kind's fields and their defaults.
std::string modelSpecHelp();

} // namespace mlir::loom::driver

#endif // LOOM_DRIVER_SPECS_H
