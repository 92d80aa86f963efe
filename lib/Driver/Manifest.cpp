//===- Manifest.cpp - manifest.json from the compiled module --------------===//
#include "Manifest.h"

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "passes/Distribute/Pipeline.h"

#include "loom/Driver/Specs.h"
#include "loom/Version.h"
#include "loom/runtime/ManifestSchema.h"
#include "loom/runtime/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::driver;

namespace json = llvm::json;
namespace key = ::loom::manifest;

static std::string dtypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isF64())
    return "f64";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(64))
    return "i64";
  return "unsupported";
}

static json::Array shapeJson(ShapedType t) {
  json::Array shape;
  for (int64_t d : t.getShape())
    shape.push_back(d);
  return shape;
}

static json::Object tensorJson(StringRef name, ShapedType t) {
  return json::Object{{key::tensor::name, name.str()},
                      {key::tensor::shape, shapeJson(t)},
                      {key::tensor::dtype, dtypeName(t.getElementType())}};
}

static json::Object initJson(StringRef kind, double scale) {
  return json::Object{{key::init::kind, kind.str()}, {key::init::scale, scale}};
}

/// The string, integer and float entries of `dict`, as JSON fields of
/// `into` (the IR's record of the task and of the optimizer, whose names
/// are the manifest's: ManifestSchema.def lists them).
static void addScalars(DictionaryAttr dict, json::Object &into) {
  for (NamedAttribute field : dict) {
    if (auto f = dyn_cast<FloatAttr>(field.getValue()))
      into[field.getName().strref()] = f.getValueAsDouble();
    else if (auto flag = dyn_cast<BoolAttr>(field.getValue()))
      into[field.getName().strref()] = flag.getValue();
    else if (auto i = dyn_cast<IntegerAttr>(field.getValue()))
      into[field.getName().strref()] = i.getInt();
    else if (auto str = dyn_cast<StringAttr>(field.getValue()))
      into[field.getName().strref()] = str.getValue();
  }
}

static json::Object meshJson(comm::MeshOp mesh) {
  json::Array axes, shape;
  for (Attribute a : mesh.getAxes())
    axes.push_back(cast<StringAttr>(a).str());
  for (int64_t d : mesh.getShape())
    shape.push_back(d);
  return json::Object{{key::mesh::axes, std::move(axes)},
                      {key::mesh::shape, std::move(shape)}};
}

static json::Array paramsJson(ModuleOp train) {
  json::Array params;
  for (ParamOp p : train.getOps<ParamOp>()) {
    json::Object o = tensorJson(p.getSymName(), p.getTensorType());
    double scale = p.getScale() ? p.getScale()->convertToDouble() : 0.0;
    o[key::tensor::init] = initJson(stringifyInitKind(p.getInit()), scale);
    o[key::tensor::weight_decay] = !p.getNoWeightDecay();
    // ZeRO-3: the param is this rank's slice of a tensor of full_shape.
    if (auto full = p->getAttrOfType<TypeAttr>(kFullTypeAttr)) {
      o[key::tensor::sharded] = true;
      o[key::tensor::full_shape] =
          shapeJson(cast<RankedTensorType>(full.getValue()));
    }
    // Tensor parallelism: the param is this rank's part of a whole.
    if (auto split = p->getAttrOfType<TensorSplitAttr>(kTensorSplitAttr))
      o[key::tensor::tensor_split] =
          json::Object{{key::tensor_split::dim, split.getDim()},
                       {key::tensor_split::blocks, split.getBlocks()},
                       {key::tensor_split::axis, split.getAxis().str()}};
    if (auto stages = p->getAttrOfType<DenseI64ArrayAttr>(kPipelineStagesAttr))
      o[key::tensor::pipeline_stages] = json::Array(stages.asArrayRef());
    params.push_back(std::move(o));
  }
  return params;
}

static json::Array inputsJson(ModuleOp train) {
  json::Array inputs;
  auto loss = train.lookupSymbol<func::FuncOp>("loss");
  if (!loss) // a pipelined step's: every stage takes the same inputs
    loss = train.lookupSymbol<func::FuncOp>(pipelineSymbol("loss", 0));
  if (loss)
    for (auto [i, t] : llvm::enumerate(loss.getArgumentTypes())) {
      auto name = loss.getArgAttrOfType<StringAttr>(i, kInputAttr);
      inputs.push_back(tensorJson(name ? name.getValue()
                                       : StringRef("input" + std::to_string(i)),
                                  cast<ShapedType>(t)));
    }
  // CO2's outer step takes the round and the stale mean (replicated) or a
  // slice of it with the slice's outer state (sharded) from the runtime.
  for (StringRef entry : {"outer_step", "outer_shard"})
    if (auto outer = train.lookupSymbol<func::FuncOp>(entry))
      for (auto [i, t] : llvm::enumerate(outer.getArgumentTypes()))
        inputs.push_back(tensorJson(
            outer.getArgAttrOfType<StringAttr>(i, kInputAttr).getValue(),
            cast<ShapedType>(t)));
  return inputs;
}

/// CO2's schedule, which the runtime runs (docs/co2.md), from the IR's
/// #loom.co2, whose field names are the manifest's.
static json::Object co2Json(CO2Attr co2) {
  json::Object out{
      {key::co2::local_steps, co2.getLocalSteps()},
      {key::co2::outer_lr, co2.getOuterLr().getValueAsDouble()},
      {key::co2::outer_momentum, co2.getOuterMomentum().getValueAsDouble()},
      {key::co2::gap_penalty, co2.getGapPenalty().getValueAsDouble()},
      {key::co2::clip, co2.getClip().getValueAsDouble()},
      {key::co2::ranks, co2.getRanks()},
      {key::co2::local_steps_reason, co2.getLocalStepsReason().str()}};
  if (!co2.getSharded())
    return out;
  out[key::co2::sharded] = true;
  out[key::co2::shard_elements] = co2.getShardElements();
  json::Array names;
  for (Attribute name : co2.getParams())
    names.push_back(cast<StringAttr>(name).str());
  out[key::co2::params] = std::move(names);
  // As --loom-co2 decided it (the attribute's verifier checked it); the
  // runtime checks and follows it.
  json::Array layout;
  for (auto [offset, elements] :
       llvm::zip_equal(co2.getShardOffsets().asArrayRef(),
                       co2.getShardSizes().asArrayRef()))
    layout.push_back(json::Object{{key::co2_shard::offset, offset},
                                  {key::co2_shard::elements, elements}});
  out[key::co2::layout] = std::move(layout);
  return out;
}

/// `v` rounded to 9 digits: the unit conversions would print 50 us as
/// 49.999999999999993.
static double tidy(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", v);
  return std::strtod(text, nullptr);
}

/// The gradient compression (--loom-compress) and the link its cost rule
/// models: the module's loom.machine, which the pass pipeline described.
static json::Object compressionJson(CompressionAttr c, ModuleOp train,
                                    const MachineModel &fallback) {
  double gbps = fallback.linkBytesPerSecond * 8 / 1e9;
  double latencyUs = fallback.linkLatencySeconds * 1e6;
  if (auto machine = train->getAttrOfType<MachineAttr>(kMachineAttr)) {
    gbps = machine.getLinkGbps().getValueAsDouble();
    latencyUs = machine.getLinkLatencyUs().getValueAsDouble();
  }
  json::Array slots;
  for (auto [param, rows, cols] : llvm::zip_equal(
           c.getParams(), c.getRows().asArrayRef(), c.getCols().asArrayRef()))
    slots.push_back(json::Object{
        {key::compression_slot::param, cast<StringAttr>(param).getValue()},
        {key::compression_slot::rows, rows},
        {key::compression_slot::cols, cols}});
  return json::Object{
      {key::compression::method, c.getMethod()},
      {key::compression::rank, c.getRank()},
      {key::compression::bits, c.getBits()},
      {key::compression::density, c.getDensity().getValueAsDouble()},
      {key::compression::warmup_steps, c.getWarmupSteps()},
      {key::compression::resolve_every, c.getResolveEvery()},
      {key::compression::objective, c.getObjective()},
      {key::compression::error, c.getErrorMeasure()},
      {key::compression::link_gbps, tidy(gbps)},
      {key::compression::link_latency_us, tidy(latencyUs)},
      {key::compression::slots, std::move(slots)}};
}

/// What the compiler assumed about the machine (docs/artifact.md).
static json::Object costModelJson(const CompileOptions &options) {
  const MachineModel &machine = options.machine;
  return json::Object{
      {key::cost_model::link_gbps, tidy(machine.linkBytesPerSecond * 8 / 1e9)},
      {key::cost_model::link_latency_us,
       tidy(machine.linkLatencySeconds * 1e6)},
      {key::cost_model::gflops, tidy(machine.flopsPerSecond / 1e9)},
      {key::cost_model::comm_cpu_fraction, tidy(machine.commCpuFraction)},
      {key::cost_model::calibration_file, options.calibrationFile},
      {key::cost_model::link, options.linkSpec},
      {key::cost_model::bucket_mib, options.overlap
                                        ? json::Value(tidy(options.bucketMiB))
                                        : json::Value(nullptr)}};
}

LogicalResult ManifestBuilder::addModel(ModuleOp train,
                                        const CompileOptions &options) {
  manifest[key::root::format_version] = LOOM_ABI_VERSION;
  manifest[key::root::generator] = "loomc";
  manifest[key::root::generator_version] = LOOM_VERSION_STRING;
  manifest[key::root::library] = "model.so";
  manifest[key::root::dtype] = options.dtype;
  const std::string expanded = driver::expandModelPreset(options.modelSpec);
  StringRef spec = expanded;
  manifest[key::root::model] = json::Object{
      {key::model::kind, spec.empty() ? "custom" : spec.split(':').first.str()},
      {key::model::spec, spec.empty() ? options.inputFile : spec.str()}};

  json::Object task{{key::task::kind, "none"}};
  if (auto t = train->getAttrOfType<DictionaryAttr>("loom.task"))
    addScalars(t, task);
  manifest[key::root::task] = std::move(task);
  for (auto mesh : train.getOps<comm::MeshOp>())
    manifest[key::root::mesh] = meshJson(mesh);
  manifest[key::root::params] = paramsJson(train);
  manifest[key::root::inputs] = inputsJson(train);

  // As --loom-add-optimizer recorded it: a training step given as IR was
  // built with its own optimizer, whatever loomc's flags say.
  if (auto opt = train->getAttrOfType<DictionaryAttr>(kOptimizerAttr)) {
    json::Object optimizer;
    addScalars(opt, optimizer);
    manifest[key::root::optimizer] = std::move(optimizer);
  }
  if (auto pipeline = train->getAttrOfType<DictionaryAttr>(kPipelineAttr)) {
    json::Object o{{key::pipeline::axis, kPipelineAxis.str()}};
    addScalars(pipeline, o);
    manifest[key::root::pipeline] = std::move(o);
  }
  if (auto co2 = train->getAttrOfType<CO2Attr>(kCO2Attr))
    manifest[key::root::co2] = co2Json(co2);
  if (auto zero = train->getAttrOfType<ZeroAttr>(kZeroAttr)) {
    manifest[key::root::zero] =
        json::Object{{key::zero::stage, zero.getStage()},
                     {key::zero::ranks, zero.getRanks()}};
    for (Attribute name : zero.getParams())
      shardedParams.insert(cast<StringAttr>(name).getValue());
  }
  if (auto c = train->getAttrOfType<CompressionAttr>(kCompressionAttr))
    manifest[key::root::compression] =
        compressionJson(c, train, options.machine);
  manifest[key::root::cost_model] = costModelJson(options);
  manifest[key::root::compile_options] =
      json::Object{{key::compile_options::command_line, options.commandLine},
                   {key::compile_options::target, options.target},
                   {key::compile_options::precision, options.precision}};
  // What the runtime must run it on (docs/artifact.md).
  manifest[key::root::target] = options.target;
  if (options.target == "cuda")
    manifest[key::root::cuda] =
        json::Object{{key::cuda::chip, options.cudaChip}};
  return success();
}

LogicalResult ManifestBuilder::addEntries(ModuleOp lowered) {
  json::Object entries;
  json::Array state;
  llvm::StringSet<> seenState, paramNames;
  // The tensor_split and stages of each param, which its state shares.
  llvm::StringMap<json::Value> splits, stages;
  if (const json::Array *params = manifest.getArray(key::root::params))
    for (const json::Value &p : *params)
      if (auto name = p.getAsObject()->getString(key::tensor::name)) {
        paramNames.insert(*name);
        if (const json::Value *split =
                p.getAsObject()->get(key::tensor::tensor_split))
          splits.try_emplace(*name, *split);
        if (const json::Value *held =
                p.getAsObject()->get(key::tensor::pipeline_stages))
          stages.try_emplace(*name, *held);
      }
  for (auto fn : lowered.getOps<func::FuncOp>()) {
    auto entry = fn->getAttrOfType<StringAttr>(kEntryAttr);
    auto abi = fn->getAttrOfType<ArrayAttr>(kAbiAttr);
    if (!entry || !abi)
      continue;
    json::Array args;
    for (auto [attr, type] : llvm::zip(abi, fn.getArgumentTypes())) {
      auto dict = cast<DictionaryAttr>(attr);
      StringRef role = dict.getAs<StringAttr>("role").getValue();
      StringRef name = dict.getAs<StringAttr>("name").getValue();
      auto shaped = cast<ShapedType>(type);
      args.push_back(
          json::Object{{key::arg::role, role.str()},
                       {key::arg::name, name.str()},
                       {key::arg::shape, shapeJson(shaped)},
                       {key::arg::dtype, dtypeName(shaped.getElementType())}});
      if (role != "state" || !seenState.insert(name).second)
        continue;
      json::Object s = tensorJson(name, shaped);
      // Optimizer state belongs to a parameter; CO2's sharded outer state
      // (co2.shard.*) to a slice of all of them.
      if (StringRef owner = name.rsplit('.').first; paramNames.count(owner)) {
        s[key::tensor::param] = owner.str();
        // ZeRO: this rank's slice of the state (loom.zero's layout).
        if (shardedParams.contains(owner))
          s[key::tensor::sharded] = true;
        if (auto split = splits.find(owner); split != splits.end())
          s[key::tensor::tensor_split] = split->second;
        if (auto held = stages.find(owner); held != stages.end())
          s[key::tensor::pipeline_stages] = held->second;
      }
      s[key::tensor::init] = initJson("zeros", 0.0);
      state.push_back(std::move(s));
    }
    entries[entry.str()] =
        json::Object{{key::entry::symbol, ("loom_" + entry.getValue()).str()},
                     {key::entry::args, std::move(args)}};
  }
  manifest[key::root::entries] = std::move(entries);
  manifest[key::root::state] = std::move(state);
  return success();
}

LogicalResult ManifestBuilder::write(StringRef dir) {
  // The runtime checks the library against this before loading it: a
  // model.so from another compilation (a partial copy of an artifact)
  // would otherwise run with this manifest's tensors and corrupt memory.
  SmallString<256> library(dir);
  llvm::sys::path::append(library, "model.so");
  auto bytes = llvm::MemoryBuffer::getFile(library, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!bytes) {
    llvm::errs() << "loomc: error: cannot read " << library << ": "
                 << bytes.getError().message() << "\n";
    return failure();
  }
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef((*bytes)->getBuffer()));
  manifest[key::root::library_sha256] = llvm::toHex(digest, /*LowerCase=*/true);

  SmallString<256> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "loomc: error: cannot write " << path << ": "
                 << ec.message() << "\n";
    return failure();
  }
  os << llvm::formatv("{0:2}", json::Value(json::Object(manifest))) << "\n";
  return success();
}
