//===- ModelZoo.cpp - Built-in models -------------------------------------===//
//
// The GPT follows nanoGPT exactly (pre-LayerNorm blocks, tanh GELU, learned
// positions, no dropout, lm_head tied to transformer.wte) with its parameter
// names and layouts, so checkpoints move between Loom and PyTorch unchanged.
//
//===----------------------------------------------------------------------===//
#include "loom/Driver/ModelZoo.h"

#include "dialects/Loom/IR/LoomBuilder.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::driver;

namespace {

/// Declares parameters at the top of the module and reads them in @loss.
struct ModelBuilder {
  ModuleOp module;
  OpBuilder decls, body;
  LoomBuilder lb;
  Type et;

  ModelBuilder(ModuleOp module, func::FuncOp fn, Type et)
      : module(module), decls(module.getBodyRegion()),
        body(fn.getBody().front().getParentOp()->getContext()), lb{body,
                                                                   fn.getLoc()},
        et(et) {
    decls.setInsertionPoint(fn);
    body.setInsertionPointToStart(&fn.getBody().front());
  }

  Value param(StringRef name, ArrayRef<int64_t> shape, InitKind init,
              double scale = 0.0, bool decay = true) {
    auto type = RankedTensorType::get(shape, et);
    auto p = ParamOp::create(
        decls, module.getLoc(), name, type, init,
        scale > 0 ? decls.getF64FloatAttr(scale) : FloatAttr(), !decay);
    return lb.getParam(p);
  }
  Value weight(StringRef name, ArrayRef<int64_t> shape, double std) {
    return param(name, shape, InitKind::normal, std);
  }
  Value bias(StringRef name, int64_t n) {
    return param(name, {n}, InitKind::zeros, 0.0, /*decay=*/false);
  }
  Value linear(Value x, StringRef prefix, int64_t out, int64_t in, double std) {
    Value w = weight((prefix + ".weight").str(), {out, in}, std);
    Value b = bias((prefix + ".bias").str(), out);
    return LinearOp::create(body, lb.loc, x, w, b);
  }
  Value layerNorm(Value x, StringRef prefix, int64_t d) {
    Value w =
        param((prefix + ".weight").str(), {d}, InitKind::ones, 0.0, false);
    Value b = bias((prefix + ".bias").str(), d);
    return LayerNormOp::create(body, lb.loc, x, w, b,
                               body.getF64FloatAttr(1e-5));
  }
};

/// Creates `func.func @loss(inputs) -> tensor<et>` in `module`.
func::FuncOp createLoss(ModuleOp module, ArrayRef<Type> inputs,
                        ArrayRef<StringRef> names, Type et) {
  OpBuilder b(module.getBodyRegion());
  auto fn = func::FuncOp::create(
      b, module.getLoc(), "loss",
      b.getFunctionType(inputs, RankedTensorType::get({}, et)));
  fn.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(names))
    fn.setArgAttr(i, kInputAttr, b.getStringAttr(name));
  return fn;
}

void buildMlp(ModuleOp module, const MlpSpec &s, Type et) {
  OpBuilder b(module.getContext());
  auto x = RankedTensorType::get({s.batch, s.in}, et);
  auto y = RankedTensorType::get({s.batch}, b.getI32Type());
  func::FuncOp fn = createLoss(module, {x, y}, {"x", "y"}, et);
  ModelBuilder mb(module, fn, et);
  Value h = fn.getArgument(0);
  int64_t width = s.in;
  for (int64_t i = 0; i < s.layers; ++i) {
    bool last = i + 1 == s.layers;
    int64_t out = last ? s.out : s.hidden;
    // Kaiming-style scale keeps activations O(1) through the ReLU stack.
    h = mb.linear(h, "fc" + std::to_string(i + 1), out, width,
                  std::sqrt(2.0 / double(width)) / (last ? 2.0 : 1.0));
    if (!last)
      h = ReluOp::create(mb.body, mb.lb.loc, h);
    width = out;
  }
  Value loss = CrossEntropyOp::create(mb.body, mb.lb.loc, h, fn.getArgument(1));
  func::ReturnOp::create(mb.body, mb.lb.loc, loss);
  module->setAttr("loom.task",
                  b.getDictionaryAttr(
                      {b.getNamedAttr("kind", b.getStringAttr("classify")),
                       b.getNamedAttr("features", b.getI64IntegerAttr(s.in)),
                       b.getNamedAttr("classes", b.getI64IntegerAttr(s.out)),
                       b.getNamedAttr("batch", b.getI64IntegerAttr(s.batch))}));
}

void buildGpt(ModuleOp module, const GptSpec &s, Type et) {
  OpBuilder b(module.getContext());
  auto ids = RankedTensorType::get({s.batch, s.seq}, b.getI32Type());
  SmallVector<Type> inputs{ids, ids};
  SmallVector<StringRef> names{"tokens", "targets"};
  if (s.docs) {
    inputs.append({ids, ids});
    names.append({"segments", "positions"});
  }
  func::FuncOp fn = createLoss(module, inputs, names, et);
  ModelBuilder mb(module, fn, et);
  LoomBuilder &lb = mb.lb;
  OpBuilder &ob = mb.body;
  const int64_t B = s.batch, T = s.seq, D = s.dim, H = s.heads, Dh = D / H;
  // nanoGPT: N(0, 0.02), residual projections N(0, 0.02/sqrt(2L)).
  const double std = 0.02, projStd = 0.02 / std::sqrt(2.0 * s.layers);

  Value wte = mb.weight("transformer.wte.weight", {s.vocab, D}, std);
  Value wpe = mb.weight("transformer.wpe.weight", {s.positions(), D}, std);
  Value tokens = EmbeddingOp::create(ob, lb.loc, wte, fn.getArgument(0));
  // Packed documents: each token's position restarts at its document's
  // start, and attention stays inside the document (its segment).
  Value segments = s.docs ? fn.getArgument(2) : Value();
  Value x = s.docs ? lb.add(tokens, EmbeddingOp::create(ob, lb.loc, wpe,
                                                        fn.getArgument(3)))
                   : lb.add(tokens, wpe);
  auto heads = [&](Value t) { // [B,T,D] -> [B,H,T,Dh]
    return TransposeOp::create(ob, lb.loc, lb.reshape(t, {B, T, H, Dh}),
                               ArrayRef<int64_t>{0, 2, 1, 3});
  };
  auto pieceType = RankedTensorType::get({B, T, D}, et);
  for (int64_t i = 0; i < s.layers; ++i) {
    std::string p = "transformer.h." + std::to_string(i);
    Value h = mb.layerNorm(x, p + ".ln_1", D);
    Value qkv = mb.linear(h, p + ".attn.c_attn", 3 * D, D, std);
    auto split = SplitOp::create(
        ob, lb.loc, TypeRange{pieceType, pieceType, pieceType}, qkv, 2);
    Value att = AttentionOp::create(
        ob, lb.loc, heads(split.getResult(0)), heads(split.getResult(1)),
        heads(split.getResult(2)), segments, true, FloatAttr());
    Value merged = lb.reshape(
        TransposeOp::create(ob, lb.loc, att, ArrayRef<int64_t>{0, 2, 1, 3}),
        {B, T, D});
    x = lb.add(x, mb.linear(merged, p + ".attn.c_proj", D, D, projStd));
    h = mb.layerNorm(x, p + ".ln_2", D);
    Value fc = GeluOp::create(ob, lb.loc,
                              mb.linear(h, p + ".mlp.c_fc", 4 * D, D, std));
    x = lb.add(x, mb.linear(fc, p + ".mlp.c_proj", D, 4 * D, projStd));
  }
  x = mb.layerNorm(x, "transformer.ln_f", D);
  // lm_head shares transformer.wte.weight (weight tying), without bias.
  Value logits = LinearOp::create(ob, lb.loc, x, wte, Value());
  Value loss = CrossEntropyOp::create(ob, lb.loc, logits, fn.getArgument(1));
  func::ReturnOp::create(ob, lb.loc, loss);
  SmallVector<NamedAttribute> task{
      b.getNamedAttr("kind", b.getStringAttr("lm")),
      b.getNamedAttr("vocab", b.getI64IntegerAttr(s.vocab)),
      b.getNamedAttr("seq", b.getI64IntegerAttr(T)),
      b.getNamedAttr("batch", b.getI64IntegerAttr(B))};
  if (s.docs) {
    task.push_back(b.getNamedAttr("documents", b.getBoolAttr(true)));
    task.push_back(
        b.getNamedAttr("context", b.getI64IntegerAttr(s.positions())));
  }
  module->setAttr("loom.task", b.getDictionaryAttr(task));
}

} // namespace

OwningOpRef<ModuleOp> mlir::loom::driver::buildModel(MLIRContext *ctx,
                                                     const ModelSpec &spec,
                                                     Type elementType) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(ctx));
  if (spec.kind == ModelSpec::Kind::Mlp)
    buildMlp(*module, spec.mlp, elementType);
  else
    buildGpt(*module, spec.gpt, elementType);
  return module;
}
