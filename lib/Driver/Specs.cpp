//===- Specs.cpp - `--model` and `--optimizer` spec strings ---------------===//
#include "loom/Driver/Specs.h"

#include "dialects/Loom/IR/LoomShapes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <climits>
#include <cmath>
#include <functional>

using namespace mlir::loom;
using namespace mlir::loom::driver;
using llvm::StringRef;

namespace {
/// One `name=value` field a spec accepts.
struct Field {
  const char *name;
  std::function<bool(StringRef)> set; ///< false: the value does not parse
  const char *expected;
};

llvm::Error fail(StringRef flag, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 (flag + ": " + msg).str());
}

Field intField(const char *name, int64_t &slot) {
  return {
      name,
      [&slot](StringRef v) { return !v.getAsInteger(10, slot) && slot > 0; },
      "a positive integer"};
}

/// A non-negative integer (a count, a seed).
Field countField(const char *name, int64_t &slot, const char *expected) {
  return {
      name,
      [&slot](StringRef v) { return !v.getAsInteger(10, slot) && slot >= 0; },
      expected};
}

Field floatField(const char *name, double &slot, bool positive) {
  return {name,
          [&slot, positive](StringRef v) {
            // "inf" and "1e400" parse; the manifest (JSON) cannot hold them.
            if (v.getAsDouble(slot) || !std::isfinite(slot))
              return false;
            return positive ? slot > 0 : slot >= 0;
          },
          positive ? "a positive finite number"
                   : "a non-negative finite number"};
}

/// Applies `key=value,...` to `fields`.
llvm::Error applyFields(StringRef flag, StringRef kind, StringRef body,
                        llvm::ArrayRef<Field> fields) {
  if (body.empty())
    return llvm::Error::success();
  llvm::SmallVector<StringRef> parts;
  body.split(parts, ',');
  llvm::StringSet<> seen;
  for (StringRef part : parts) {
    // Not a structured binding: C++17 lambdas cannot capture one (clang).
    std::pair<StringRef, StringRef> keyValue = part.split('=');
    StringRef key = keyValue.first.trim(), value = keyValue.second.trim();
    const Field *field =
        llvm::find_if(fields, [&](const Field &f) { return key == f.name; });
    if (field == fields.end()) {
      std::string names;
      for (const Field &f : fields)
        names += (names.empty() ? "" : ", ") + std::string(f.name);
      return fail(flag, "field '" + key + "' is not one of " + names +
                            " (for " + kind + ")");
    }
    if (!part.contains('='))
      return fail(flag, "field '" + key + "' needs a value (" + key + "=...)");
    // Which of two values was meant is anyone's guess (as for duplicate
    // keys in the runtime's JSON files).
    if (!seen.insert(key).second)
      return fail(flag, "field '" + key + "' is given twice");
    if (!field->set(value))
      return fail(flag, "field '" + key + "' must be " + field->expected +
                            ", got '" + value + "'");
  }
  return llvm::Error::success();
}

/// Fails when a tensor the model would build is larger than loom ops take
/// (isSupportedShape); checked before building, whose shape inference would
/// otherwise see wrapped-around sizes.
llvm::Error checkTensors(
    std::initializer_list<std::pair<const char *, llvm::SmallVector<int64_t>>>
        tensors) {
  for (const auto &[what, shape] : tensors)
    if (!mlir::loom::isSupportedShape(shape))
      return fail("--model", llvm::Twine("the model is too large: its ") +
                                 what + " " + mlir::loom::formatShape(shape) +
                                 " would have more than 2^40 elements");
  return llvm::Error::success();
}

/// The most layers a built-in model may have: each is built into the IR
/// and compiled (the largest GPTs have about 100), and a spec asking for
/// 2^62 of them once kept loomc building forever.
constexpr int64_t kMaxLayers = 1024;

llvm::Error checkLayers(int64_t layers) {
  if (layers > kMaxLayers)
    return fail("--model", "the model is too large: " + llvm::Twine(layers) +
                               " layers (at most " + llvm::Twine(kMaxLayers) +
                               ", each built into the IR and compiled)");
  return llvm::Error::success();
}
} // namespace

namespace {
/// Named models: a preset's spec is the gpt spec it stands for, with the
/// fields given after the name (`gpt2-124m:batch=16`) in place of its own.
struct Preset {
  const char *name;
  const char *spec;
};
/// GPT-2 124M as nanoGPT trains it (the vocabulary padded from 50257 to a
/// multiple of 64).
constexpr Preset kPresets[] = {
    {"gpt2-124m",
     "gpt:vocab=50304,seq=1024,dim=768,heads=12,layers=12,batch=8"},
};
} // namespace

std::string mlir::loom::driver::expandModelPreset(StringRef text) {
  auto [name, body] = text.split(':');
  const Preset *preset =
      llvm::find_if(kPresets, [&](const Preset &p) { return name == p.name; });
  if (preset == std::end(kPresets))
    return text.str();
  auto [kind, fields] = StringRef(preset->spec).split(':');
  llvm::SmallVector<StringRef> merged, given;
  fields.split(merged, ',');
  if (!body.empty())
    body.split(given, ',');
  llvm::StringSet<> replaced;
  for (StringRef field : given) {
    StringRef key = field.split('=').first.trim();
    auto same = llvm::find_if(
        merged, [&](StringRef f) { return f.split('=').first == key; });
    // A field given twice stays twice, for applyFields to refuse.
    if (same != merged.end() && replaced.insert(key).second)
      *same = field;
    else
      merged.push_back(field);
  }
  return (kind + ":" + llvm::join(merged, ",")).str();
}

llvm::Expected<ModelSpec> mlir::loom::driver::parseModelSpec(StringRef given) {
  ModelSpec spec;
  spec.text = expandModelPreset(given);
  StringRef text = spec.text;
  auto [kind, body] = text.split(':');
  if (kind == "mlp") {
    spec.kind = ModelSpec::Kind::Mlp;
    MlpSpec &m = spec.mlp;
    if (auto err =
            applyFields("--model", kind, body,
                        {intField("in", m.in), intField("hidden", m.hidden),
                         intField("out", m.out), intField("layers", m.layers),
                         intField("batch", m.batch)}))
      return std::move(err);
    if (m.out < 2)
      return fail("--model", "field 'out' must be at least 2: the "
                             "classifier's loss over one class is always 0");
    if (auto err = checkLayers(m.layers))
      return std::move(err);
    if (auto err = checkTensors(
            {{"first weight", {m.hidden, m.in}},
             {"hidden weights", {m.hidden, m.hidden}},
             {"hidden weights of all layers", {m.layers, m.hidden, m.hidden}},
             {"last weight", {m.out, m.hidden}},
             {"inputs", {m.batch, m.in}},
             {"activations", {m.batch, m.hidden}},
             {"logits", {m.batch, m.out}}}))
      return std::move(err);
    return spec;
  }
  if (kind == "gpt") {
    spec.kind = ModelSpec::Kind::Gpt;
    GptSpec &g = spec.gpt;
    if (auto err = applyFields(
            "--model", kind, body,
            {intField("vocab", g.vocab), intField("seq", g.seq),
             intField("dim", g.dim), intField("heads", g.heads),
             intField("layers", g.layers), intField("batch", g.batch),
             countField("docs", g.docs, "0 or 1"),
             countField("context", g.context, "a count of tokens")}))
      return std::move(err);
    if (g.docs > 1)
      return fail("--model",
                  "field 'docs' must be 0 or 1, got " + llvm::Twine(g.docs));
    if (g.context > 0 && !g.docs)
      return fail("--model", "field 'context' applies to docs=1 only (the "
                             "longest document attended whole)");
    if (g.context > 0 && g.context < g.seq)
      return fail("--model", "field 'context' (" + llvm::Twine(g.context) +
                                 ") must be at least 'seq' (" +
                                 llvm::Twine(g.seq) + ")");
    if (g.vocab < 2 || g.vocab > INT32_MAX)
      return fail("--model", "field 'vocab' must be between 2 and " +
                                 llvm::Twine(INT32_MAX) +
                                 " (tokens are i32), got " +
                                 llvm::Twine(g.vocab));
    if (g.dim % g.heads)
      return fail("--model", "field 'heads' (" + llvm::Twine(g.heads) +
                                 ") must divide 'dim' (" + llvm::Twine(g.dim) +
                                 ")");
    if (auto err = checkLayers(g.layers))
      return std::move(err);
    // The embedding first: it bounds dim, so 4 * dim and 12 * dim cannot
    // wrap.
    if (auto err = checkTensors(
            {{"embedding", {g.vocab, g.dim}},
             {"positions", {g.positions(), g.dim}},
             {"weights of all layers", {g.layers, 12 * g.dim, g.dim}},
             {"attention scores", {g.batch, g.heads, g.seq, g.seq}},
             {"MLP activations", {g.batch, g.seq, 4 * g.dim}},
             {"logits", {g.batch, g.seq, g.vocab}}}))
      return std::move(err);
    return spec;
  }
  std::string presets;
  for (const Preset &p : kPresets)
    presets += std::string(presets.empty() ? "" : ", ") + p.name;
  return fail("--model", "unknown model kind '" + kind +
                             "' (expected mlp:..., gpt:... or a named model: " +
                             presets + ")");
}

llvm::Expected<OptimizerOptions>
mlir::loom::driver::parseOptimizerSpec(StringRef text) {
  OptimizerOptions spec;
  auto [kind, body] = text.split(':');
  spec.optimizer = kind.str();
  if (kind == "adamw") {
    if (auto err = applyFields("--optimizer", kind, body,
                               {floatField("lr", spec.lr, true),
                                floatField("beta1", spec.beta1, false),
                                floatField("beta2", spec.beta2, false),
                                floatField("eps", spec.eps, true),
                                floatField("wd", spec.weightDecay, false)}))
      return std::move(err);
    if (spec.beta1 >= 1 || spec.beta2 >= 1)
      return fail("--optimizer", "fields 'beta1' and 'beta2' must be below 1");
    return spec;
  }
  if (kind == "sgd") {
    spec.weightDecay = 0.0;
    if (auto err = applyFields("--optimizer", kind, body,
                               {floatField("lr", spec.lr, true),
                                floatField("momentum", spec.momentum, false),
                                floatField("wd", spec.weightDecay, false)}))
      return std::move(err);
    if (spec.momentum >= 1)
      return fail("--optimizer", "field 'momentum' must be below 1");
    return spec;
  }
  return fail("--optimizer", "unknown optimizer '" + kind +
                                 "' (expected adamw:... or sgd:...)");
}

/// Far more than any run takes between synchronisations; the step
/// arithmetic of a round stays far from overflowing.
constexpr int64_t kMaxLocalSteps = 1000000;

llvm::Expected<CO2Options> mlir::loom::driver::parseCO2Spec(StringRef text) {
  CO2Options spec;
  if (text == "on")
    return spec; // the defaults
  Field localSteps{"local-steps",
                   [&spec](StringRef v) {
                     if (v == "auto") {
                       spec.localSteps = 0;
                       return true;
                     }
                     return !v.getAsInteger(10, spec.localSteps) &&
                            spec.localSteps > 0 &&
                            spec.localSteps <= kMaxLocalSteps;
                   },
                   "a positive integer up to 1000000, or auto"};
  Field sharded{"sharded",
                [&spec](StringRef v) {
                  if (v == "1" || v == "true" || v == "on")
                    spec.sharded = true;
                  else if (v == "0" || v == "false" || v == "off")
                    spec.sharded = false;
                  else
                    return false;
                  return true;
                },
                "0 or 1"};
  Field maxLocalSteps{"max-local-steps",
                      [&spec](StringRef v) {
                        return !v.getAsInteger(10, spec.maxLocalSteps) &&
                               spec.maxLocalSteps > 0 &&
                               spec.maxLocalSteps <= kMaxLocalSteps;
                      },
                      "a positive integer up to 1000000"};
  if (auto err = applyFields(
          "--co2", "co2", text,
          {localSteps, floatField("outer-lr", spec.outerLr, true),
           floatField("outer-momentum", spec.outerMomentum, false),
           floatField("gap-penalty", spec.gapPenalty, false),
           floatField("clip", spec.clip, false), sharded, maxLocalSteps}))
    return std::move(err);
  if (spec.outerMomentum >= 1)
    return fail("--co2", "field 'outer-momentum' must be below 1");
  return spec;
}

llvm::Expected<ZOOptions> mlir::loom::driver::parseZOSpec(StringRef text) {
  ZOOptions spec;
  auto [kind, body] = text.split(':');
  if (kind != "mezo")
    return fail("--zo", "unknown zeroth-order method '" + kind +
                            "' (expected mezo or mezo:eps=..,lr=..,wd=..)");
  Field seed = countField("seed", spec.seed, "a non-negative integer");
  Field pert{"pert",
             [&spec](StringRef v) {
               return !v.getAsInteger(10, spec.perturbationRanks) &&
                      (spec.perturbationRanks == 1 ||
                       spec.perturbationRanks == 2);
             },
             "1 or 2"};
  Field directions{"directions",
                   [&spec](StringRef v) {
                     spec.directions = v.str();
                     return v == "shared" || v == "rank";
                   },
                   "shared or rank"};
  Field offload{"offload",
                [&spec](StringRef v) {
                  spec.offload = v == "1";
                  return v == "0" || v == "1";
                },
                "0 or 1"};
  double prefetchMiB = 0;
  Field prefetch{"prefetch",
                 [&](StringRef v) {
                   return !v.getAsDouble(prefetchMiB) && prefetchMiB > 0 &&
                          prefetchMiB < double(int64_t(1) << 40);
                 },
                 "a positive number of MiB"};
  if (auto err = applyFields("--zo", kind, body,
                             {floatField("eps", spec.eps, true),
                              floatField("lr", spec.lr, true),
                              floatField("wd", spec.weightDecay, false), seed,
                              pert, directions, offload, prefetch}))
    return std::move(err);
  spec.prefetchBytes = int64_t(prefetchMiB * double(1 << 20));
  if (spec.prefetchBytes && !spec.offload)
    return fail("--zo", "prefetch=.. needs offload=1");
  return spec;
}

llvm::Expected<std::optional<CompressOptions>>
mlir::loom::driver::parseCompressSpec(StringRef text, bool rounds) {
  CompressOptions spec;
  if (rounds) {
    spec.warmupSteps = kRoundWarmup;
    spec.resolveEvery = kRoundEvery;
  }
  auto [method, body] = text.split(':');
  if (method == "none" && body.empty())
    return std::nullopt;
  Field warmup =
      countField("warmup", spec.warmupSteps, "a non-negative integer");
  Field bits{"bits",
             [&spec](StringRef v) {
               return !v.getAsInteger(10, spec.bits) &&
                      (spec.bits == 2 || spec.bits == 4 || spec.bits == 8);
             },
             "2, 4 or 8"};
  Field density{"density",
                [&spec](StringRef v) {
                  return !v.getAsDouble(spec.density) && spec.density > 0 &&
                         spec.density <= 1;
                },
                "a number in (0, 1]"};
  Field every = countField("every", spec.resolveEvery,
                           "a non-negative integer (0: choose once)");
  Field objective{"objective",
                  [&spec](StringRef v) {
                    spec.objective = v.str();
                    return v == "time" || v == "bytes";
                  },
                  "time or bytes"};
  Field error{"error",
              [&spec](StringRef v) {
                spec.errorMeasure = v.str();
                return v == "relative" || v == "absolute";
              },
              "relative or absolute"};
  Field rank = intField("rank", spec.rank);
  llvm::SmallVector<Field> fields{warmup};
  if (method == "powersgd")
    fields.push_back(rank);
  else if (method == "quant")
    fields.push_back(bits);
  else if (method == "topk")
    fields.push_back(density);
  else if (method == "lgreco")
    fields.append({rank, every, objective, error});
  else if (method != "bf16")
    return fail("--compress", "unknown method '" + method +
                                  "' (expected none, bf16, powersgd, quant, "
                                  "topk or lgreco)");
  spec.method = method.str();
  if (auto err = applyFields("--compress", method, body, fields))
    return std::move(err);
  if (method == "lgreco" && spec.warmupSteps < 1)
    return fail("--compress", "lgreco needs warmup=1 or more (it measures "
                              "the candidates at the last warm-up step)");
  return spec;
}

std::string mlir::loom::driver::compressSpecHelp() {
  CompressOptions d;
  return llvm::formatv(
      "With --dp: compressed gradient averaging with error feedback. SPEC: "
      "none, bf16, powersgd[:rank=R] (default {0}), quant[:bits=2|4|8] "
      "(default {1}), topk[:density=D] (default {2}), or lgreco[:rank=R,"
      "every=K,objective=time|bytes,error=relative|absolute]: per layer, "
      "the cheapest of all of them within uniform powersgd:rank=R's total "
      "error (relative: each layer's error as a share of its gradient, "
      "the default), re-chosen every K "
      "(default {3}) steps at run time; each takes warmup=W fp32 steps "
      "first (default {4}). With --co2: the outer round compressed, W and K "
      "counting rounds (defaults {5} and {6}) (docs/compression.md)",
      d.rank, d.bits, d.density, d.resolveEvery, d.warmupSteps, kRoundWarmup,
      kRoundEvery);
}

std::string mlir::loom::driver::zoSpecHelp() {
  ZOOptions d;
  return llvm::formatv(
      "Zeroth-order training (MeZO): each step two forward passes at theta "
      "+- eps z, z regenerated from a seed, no backward pass and no optimizer "
      "state. SPEC: mezo[:eps=E,lr=LR,wd=WD,seed=S,pert=P,directions=D,"
      "offload=0|1,prefetch=MiB] "
      "(defaults eps={0:e1}, lr={1:e1}, wd={2:f1}, seed={3}, pert={4}, "
      "directions=shared); with --dp=N each rank its own micro-batch, one "
      "scalar averaged per step; pert=2: the two forward passes on two "
      "ranks (a job of 2N ranks); directions=rank: rank r perturbs along "
      "its own direction r, and every rank applies all N; offload=1: the "
      "parameters stay in host memory, each uploaded once a step (at most "
      "prefetch MiB ahead, default one layer's) and written back, the "
      "update applied at the next upload (ZO2; runs on the CPU target, "
      "where loom-run --offload-bandwidth models the link) (docs/zo.md)",
      d.eps, d.lr, d.weightDecay, d.seed, d.perturbationRanks);
}

std::string mlir::loom::driver::co2SpecHelp() {
  CO2Options d;
  return llvm::formatv(
      "With --dp: CO2 local updating with a one-step-stale outer "
      "all-reduce overlapping the next local steps. SPEC: "
      "on (the defaults) or local-steps=N|auto ({0}), outer-lr ({1:f1}), "
      "outer-momentum ({2:f1}), gap-penalty ({3:f1}; 0 off), clip ({4:f1}; 0 "
      "off), sharded ({5}; 1: each rank keeps 1/N of the outer state), "
      "max-local-steps ({6}: the most auto chooses), e.g. "
      "--co2=local-steps=4 (docs/co2.md)",
      d.localSteps, d.outerLr, d.outerMomentum, d.gapPenalty, d.clip,
      int(d.sharded), d.maxLocalSteps);
}

std::string mlir::loom::driver::modelSpecHelp() {
  MlpSpec m;
  GptSpec g;
  return llvm::formatv(
      "Built-in model instead of a file (a field left out keeps its "
      "default):\n"
      "  mlp:in=I,hidden=H,out=O,layers=L,batch=B\n"
      "    (default mlp:in={0},hidden={1},out={2},layers={3},batch={4})\n"
      "  "
      "gpt:vocab=V,seq=T,dim=D,heads=NH,layers=L,batch=B[,docs=1[,context=N]]\n"
      "    (default gpt:vocab={5},seq={6},dim={7},heads={8},layers={9},"
      "batch={10})\n"
      "    docs=1: rows packed with documents, attention and positions per\n"
      "    document (for --data docs:PATH, docs/sequences.md); context=N:\n"
      "    documents up to N tokens (>= seq, default seq) attended whole, N\n"
      "    positions (with --partition-sequences, across rows and ranks)\n"
      "  {11}[:FIELD=VALUE,...]\n"
      "    (GPT-2 124M: {12}; the fields given replace its own)",
      m.in, m.hidden, m.out, m.layers, m.batch, g.vocab, g.seq, g.dim, g.heads,
      g.layers, g.batch, kPresets[0].name, kPresets[0].spec);
}
