//===- Specs.h - `--model` and `--optimizer` spec strings -------*- C++ -*-===//
#ifndef LOOM_DRIVER_SPECS_H
#define LOOM_DRIVER_SPECS_H

#include "passes/Distribute/CO2Options.h"
#include "passes/Distribute/CompressOptions.h"
#include "passes/Train/OptimizerOptions.h"
#include "passes/Train/ZOOptions.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
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
  /// docs=1: rows packed with documents (docs/sequences.md); the model
  /// reads each token's document and position in it, and attention stays
  /// inside a document.
  int64_t docs = 0;
  /// With docs=1: the longest document (in tokens) the model attends whole,
  /// the rows of its position table (nanoGPT's block_size); 0 means seq. A
  /// model compiled with --partition-sequences attends a document across
  /// rows and ranks up to this length.
  int64_t context = 0;

  /// The rows of the position table.
  int64_t positions() const { return context > 0 ? context : seq; }
};

struct ModelSpec {
  enum class Kind { Mlp, Gpt } kind = Kind::Mlp;
  MlpSpec mlp;
  GptSpec gpt;
  std::string text; ///< The spec, a preset expanded (expandModelPreset).

  bool isGpt() const { return kind == Kind::Gpt; }
  /// The step's rows, whichever the kind.
  int64_t &batch() { return isGpt() ? gpt.batch : mlp.batch; }
  int64_t batch() const { return isGpt() ? gpt.batch : mlp.batch; }
  int64_t layers() const { return isGpt() ? gpt.layers : mlp.layers; }
  /// What tensor parallelism shares among its ranks: heads, hidden units.
  int64_t splitUnits() const { return isGpt() ? gpt.heads : mlp.hidden; }
};

/// A named model (`gpt2-124m[:FIELD=VALUE,...]`) as the gpt spec it stands
/// for, the fields given replacing the preset's; any other text unchanged.
/// The manifest records the expanded spec, so tools reading it see one
/// form.
std::string expandModelPreset(llvm::StringRef text);

/// `--optimizer=adamw:lr=..,beta1=..,beta2=..,eps=..,wd=..` or
/// `sgd:lr=..,momentum=..,wd=..` parses into OptimizerOptions (its kind in
/// `optimizer`, wd in `weightDecay`; SGD's weight decay defaults to 0), and
/// `--co2=local-steps=N|auto,outer-lr=..,outer-momentum=..,gap-penalty=..,
/// clip=..,sharded=0|1` into CO2Options (docs/co2.md; local-steps=auto is
/// 0). Fields left out keep the defaults the passes' .def files give.

/// Parse errors name the offending field, e.g.
/// `--model: field 'hiden' is not one of in, hidden, out, layers, batch`.
llvm::Expected<ModelSpec> parseModelSpec(llvm::StringRef text);
llvm::Expected<OptimizerOptions> parseOptimizerSpec(llvm::StringRef text);
llvm::Expected<CO2Options> parseCO2Spec(llvm::StringRef text);
/// `--zo=mezo[:eps=..,lr=..,wd=..,seed=..]` (docs/zo.md).
llvm::Expected<ZOOptions> parseZOSpec(llvm::StringRef text);

/// loomc's help for --co2: its fields and their defaults.
std::string co2SpecHelp();

/// `--compress=none|bf16|powersgd[:rank=R]|quant[:bits=B]|topk[:density=D]|
/// lgreco[:rank=R,every=K,objective=time|bytes]`, each also with warmup=W
/// (docs/compression.md); none: nullopt. `rounds`: it compresses CO2's
/// outer rounds, and warm-up and re-choice count rounds (their defaults
/// kRoundWarmup and kRoundEvery).
llvm::Expected<std::optional<CompressOptions>>
parseCompressSpec(llvm::StringRef text, bool rounds = false);
inline constexpr int64_t kRoundWarmup = 1, kRoundEvery = 10;

/// loomc's help for --compress: the methods and their defaults.
std::string compressSpecHelp();

/// loomc's help for --zo: its fields and their defaults.
std::string zoSpecHelp();

/// loomc's help for --model: each kind's fields and their defaults.
std::string modelSpecHelp();

} // namespace mlir::loom::driver

#endif // LOOM_DRIVER_SPECS_H
