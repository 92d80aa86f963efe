//===- Manifest.cpp - manifest.json from the compiled module --------------===//
#include "Manifest.h"

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomOps.h"

#include "loom/Version.h"
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

static json::Object tensorJson(StringRef name, ShapedType t) {
  json::Array shape;
  for (int64_t d : t.getShape())
    shape.push_back(d);
  return json::Object{{"name", name.str()},
                      {"shape", std::move(shape)},
                      {"dtype", dtypeName(t.getElementType())}};
}

/// The string, integer and float entries of `dict`, as JSON fields of
/// `into` (the IR's record of the task and of the optimizer).
static void addScalars(DictionaryAttr dict, json::Object &into) {
  for (NamedAttribute field : dict) {
    if (auto f = dyn_cast<FloatAttr>(field.getValue()))
      into[field.getName().strref()] = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(field.getValue()))
      into[field.getName().strref()] = i.getInt();
    else if (auto str = dyn_cast<StringAttr>(field.getValue()))
      into[field.getName().strref()] = str.getValue();
  }
}

LogicalResult ManifestBuilder::addModel(ModuleOp train,
                                        const CompileOptions &options) {
  manifest["format_version"] = LOOM_ABI_VERSION;
  manifest["generator"] = "loomc";
  manifest["generator_version"] = LOOM_VERSION_STRING;
  manifest["library"] = "model.so";
  manifest["dtype"] = options.dtype;
  json::Object model{
      {"kind", options.modelSpec.empty()
                   ? "custom"
                   : StringRef(options.modelSpec).split(':').first.str()}};
  model["spec"] =
      options.modelSpec.empty() ? options.inputFile : options.modelSpec;
  manifest["model"] = std::move(model);

  json::Object task{{"kind", "none"}};
  if (auto t = train->getAttrOfType<DictionaryAttr>("loom.task"))
    addScalars(t, task);
  manifest["task"] = std::move(task);

  for (auto mesh : train.getOps<comm::MeshOp>()) {
    json::Array axes, shape;
    for (Attribute a : mesh.getAxes())
      axes.push_back(cast<StringAttr>(a).str());
    for (int64_t d : mesh.getShape())
      shape.push_back(d);
    manifest["mesh"] =
        json::Object{{"axes", std::move(axes)}, {"shape", std::move(shape)}};
  }

  json::Array params;
  for (ParamOp p : train.getOps<ParamOp>()) {
    json::Object o = tensorJson(p.getSymName(), p.getTensorType());
    double scale = p.getScale() ? p.getScale()->convertToDouble() : 0.0;
    o["init"] = json::Object{{"kind", stringifyInitKind(p.getInit()).str()},
                             {"scale", scale}};
    o["weight_decay"] = !p.getNoWeightDecay();
    params.push_back(std::move(o));
  }
  manifest["params"] = std::move(params);

  json::Array inputs;
  if (auto loss = train.lookupSymbol<func::FuncOp>("loss"))
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
  manifest["inputs"] = std::move(inputs);

  // As --loom-add-optimizer recorded it: a training step given as IR was
  // built with its own optimizer, whatever loomc's flags say.
  if (auto opt = train->getAttrOfType<DictionaryAttr>(kOptimizerAttr)) {
    json::Object optimizer;
    addScalars(opt, optimizer);
    manifest["optimizer"] = std::move(optimizer);
  }
  // Rounded to 9 digits: the unit conversions would print 50 us as
  // 49.999999999999993.
  auto tidy = [](double v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.9g", v);
    return std::strtod(text, nullptr);
  };
  // CO2's schedule, which the runtime runs (docs/co2.md).
  if (auto co2 = train->getAttrOfType<DictionaryAttr>("loom.co2")) {
    auto f = [&](StringRef key) {
      return cast<FloatAttr>(co2.get(key)).getValueAsDouble();
    };
    manifest["co2"] = json::Object{
        {"local_steps", cast<IntegerAttr>(co2.get("local_steps")).getInt()},
        {"outer_lr", f("outer_lr")},
        {"outer_momentum", f("outer_momentum")},
        {"gap_penalty", f("gap_penalty")},
        {"clip", f("clip")},
        {"ranks", cast<IntegerAttr>(co2.get("ranks")).getInt()},
        {"local_steps_reason",
         cast<StringAttr>(co2.get("local_steps_reason")).str()}};
    if (auto sharded = co2.getAs<BoolAttr>("sharded");
        sharded && sharded.getValue()) {
      json::Object &out = *manifest["co2"].getAsObject();
      out["sharded"] = true;
      out["shard_elements"] =
          cast<IntegerAttr>(co2.get("shard_elements")).getInt();
      json::Array names;
      for (Attribute name : cast<ArrayAttr>(co2.get("params")))
        names.push_back(cast<StringAttr>(name).str());
      out["params"] = std::move(names);
    }
  }
  manifest["cost_model"] = json::Object{
      {"link_gbps", tidy(options.machine.linkBytesPerSecond * 8 / 1e9)},
      {"link_latency_us", tidy(options.machine.linkLatencySeconds * 1e6)},
      {"gflops", tidy(options.machine.flopsPerSecond / 1e9)},
      {"comm_cpu_fraction", tidy(options.machine.commCpuFraction)},
      {"calibration_file", options.calibrationFile},
      {"link", options.linkSpec},
      {"bucket_mib", options.overlap ? json::Value(tidy(options.bucketMiB))
                                     : json::Value(nullptr)}};
  manifest["compile_options"] =
      json::Object{{"command_line", options.commandLine},
                   {"target", options.target},
                   {"precision", options.precision}};
  // What the runtime must run it on (docs/artifact.md).
  manifest["target"] = options.target;
  if (options.target == "cuda")
    manifest["cuda"] = json::Object{{"chip", options.cudaChip}};
  return success();
}

LogicalResult ManifestBuilder::addEntries(ModuleOp lowered) {
  json::Object entries;
  json::Array state;
  llvm::StringSet<> seenState, paramNames;
  if (const json::Array *params = manifest.getArray("params"))
    for (const json::Value &p : *params)
      if (auto name = p.getAsObject()->getString("name"))
        paramNames.insert(*name);
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
      json::Object o = tensorJson(name, cast<ShapedType>(type));
      o["role"] = role.str();
      if (role == "state" && seenState.insert(name).second) {
        json::Object s = tensorJson(name, cast<ShapedType>(type));
        // Optimizer state belongs to a parameter; CO2's sharded outer
        // state (co2.shard.*) to a slice of all of them.
        if (StringRef owner = name.rsplit('.').first; paramNames.count(owner))
          s["param"] = owner.str();
        s["init"] = json::Object{{"kind", "zeros"}, {"scale", 0.0}};
        state.push_back(std::move(s));
      }
      args.push_back(std::move(o));
    }
    entries[entry.str()] =
        json::Object{{"symbol", ("loom_" + entry.getValue()).str()},
                     {"args", std::move(args)}};
  }
  manifest["entries"] = std::move(entries);
  manifest["state"] = std::move(state);
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
  manifest["library_sha256"] = llvm::toHex(digest, /*LowerCase=*/true);

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
