//===- Manifest.cpp - Parsing and validating manifest.json ------*- C++ -*-===//
//
// Every check names the JSON path of the field at fault, e.g.
//   out/manifest.json: params[3].shape: expected a list of non-negative
//   integers, got "64"
// so a compiler bug or a hand-edited manifest is found without a debugger.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Manifest.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/ManifestSchema.h"
#include "loom/runtime/abi.h"
#include "manifest/ManifestParser.h"
#include "manifest/NotedKeys.h"
#include "support/FileUtil.h"
#include "support/JsonParse.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdint>
#include <set>

namespace key = loom::manifest;

namespace loom::rt {

InitSpec ManifestParser::init(const json &value, const std::string &path) {
  expectObject(value, path);
  InitSpec spec;
  std::string kind = string(require(value, path, key::init::kind),
                            join(path, key::init::kind));
  if (kind == "zeros")
    spec.kind = InitSpec::Kind::Zeros;
  else if (kind == "ones")
    spec.kind = InitSpec::Kind::Ones;
  else if (kind == "normal")
    spec.kind = InitSpec::Kind::Normal;
  else if (kind == "uniform")
    spec.kind = InitSpec::Kind::Uniform;
  else
    error(join(path, key::init::kind),
          "unknown init kind \"" + kind +
              "\" (expected zeros, ones, normal or "
              "uniform)");
  if (const json *scale = optional(value, key::init::scale))
    spec.scale = number(*scale, join(path, key::init::scale));
  else if (spec.kind == InitSpec::Kind::Normal ||
           spec.kind == InitSpec::Kind::Uniform)
    error(join(path, key::init::scale), "missing required field");
  if (spec.scale < 0)
    error(join(path, key::init::scale), "must not be negative");
  return spec;
}

TensorSpec ManifestParser::tensor(const json &value, const std::string &path,
                                  bool needsInit) {
  expectObject(value, path);
  TensorSpec spec;
  spec.name = string(require(value, path, key::tensor::name),
                     join(path, key::tensor::name));
  spec.shape = shape(require(value, path, key::tensor::shape),
                     join(path, key::tensor::shape));
  spec.dtype = dtype(require(value, path, key::tensor::dtype),
                     join(path, key::tensor::dtype));
  if (const json *initValue = optional(value, key::tensor::init))
    spec.init = init(*initValue, join(path, key::tensor::init));
  else if (needsInit)
    error(join(path, key::tensor::init), "missing required field");
  return spec;
}

TaskSpec ManifestParser::task(const json &value, const std::string &path) {
  expectObject(value, path);
  TaskSpec task;
  std::string kind = string(require(value, path, key::task::kind),
                            join(path, key::task::kind));
  auto positive = [&](const char *field) {
    return integer(require(value, path, field), join(path, field), 1);
  };
  // Tokens and labels are int32 (the inputs' dtype).
  auto labels = [&](const char *field) {
    int64_t n = positive(field);
    if (n > INT32_MAX)
      error(join(path, field), "must be at most " + std::to_string(INT32_MAX) +
                                   " (labels are i32), got " +
                                   std::to_string(n));
    return n;
  };
  if (kind == "lm") {
    task.kind = TaskSpec::Kind::LM;
    task.batch = positive(key::task::batch);
    task.seq = positive(key::task::seq);
    task.vocab = labels(key::task::vocab);
    if (const json *docs = optional(value, key::task::documents))
      task.documents = boolean(*docs, join(path, key::task::documents));
    if (const json *part = optional(value, key::task::partitioned))
      task.partitioned = boolean(*part, join(path, key::task::partitioned));
    task.context = task.seq;
    if (const json *context = optional(value, key::task::context))
      task.context =
          integer(*context, join(path, key::task::context), task.seq);
    if (task.partitioned && !task.documents)
      error(join(path, key::task::partitioned),
            "needs task.documents = true (documents to place on the ranks)");
  } else if (kind == "classify") {
    task.kind = TaskSpec::Kind::Classify;
    task.batch = positive(key::task::batch);
    task.features = positive(key::task::features);
    task.classes = labels(key::task::classes);
  } else if (kind == "none") {
    task.kind = TaskSpec::Kind::None;
    if (const json *batch = optional(value, key::task::batch))
      task.batch = integer(*batch, join(path, key::task::batch), 0);
  } else {
    error(join(path, key::task::kind),
          "unknown task kind \"" + kind + "\" (expected lm, classify or none)");
  }
  return task;
}

CudaSpec ManifestParser::cuda(const json &value, const std::string &path) {
  expectObject(value, path);
  CudaSpec cuda;
  std::string chipPath = join(path, key::cuda::chip);
  const json &chip = require(value, path, key::cuda::chip);
  cuda.chip = string(chip, chipPath);
  // "sm_<major><minor>" with an optional feature suffix ("sm_90a"); the
  // last digit is the minor version, as in nvcc's and ptxas's spelling.
  size_t digits = 0;
  bool prefixed = cuda.chip.rfind("sm_", 0) == 0;
  if (prefixed)
    while (3 + digits < cuda.chip.size() &&
           std::isdigit(static_cast<unsigned char>(cuda.chip[3 + digits])))
      ++digits;
  std::string suffix = prefixed ? cuda.chip.substr(3 + digits) : "";
  if (!prefixed || digits < 2 || digits > 3 || suffix.size() > 1 ||
      (suffix.size() == 1 &&
       !std::islower(static_cast<unsigned char>(suffix[0]))))
    error(chipPath, "expected a CUDA architecture such as \"sm_90\", got " +
                        describe(chip));
  int number = std::stoi(cuda.chip.substr(3, digits));
  cuda.major = number / 10;
  cuda.minor = number % 10;
  return cuda;
}

namespace {

ArgRole parseRole(ManifestParser &parser, const json &value,
                  const std::string &path) {
  std::string role = parser.string(value, path);
  if (role == "param")
    return ArgRole::Param;
  if (role == "state")
    return ArgRole::State;
  if (role == "step")
    return ArgRole::Step;
  if (role == "input")
    return ArgRole::Input;
  if (role == "output")
    return ArgRole::Output;
  parser.error(path, "unknown role \"" + role +
                         "\" (expected param, state, step, input or output)");
}

/// Inputs must be exactly what the task's data source produces. Task none
/// accepts any inputs (its source fills them with seeded random values).
void checkTaskInputs(ManifestParser &parser, const Manifest &manifest) {
  if (manifest.task.kind == TaskSpec::Kind::None)
    return;
  struct Expected {
    const char *name;
    Shape shape;
    std::vector<DType> dtypes;
  };
  const TaskSpec &task = manifest.task;
  std::vector<Expected> expected;
  if (task.kind == TaskSpec::Kind::LM) {
    expected = {{"tokens", {task.batch, task.seq}, {DType::I32}},
                {"targets", {task.batch, task.seq}, {DType::I32}}};
    if (task.documents)
      for (const char *name : {"segments", "positions"})
        expected.push_back({name, {task.batch, task.seq}, {DType::I32}});
  } else if (task.kind == TaskSpec::Kind::Classify) {
    expected = {{"x", {task.batch, task.features}, {DType::F32, DType::F64}},
                {"y", {task.batch}, {DType::I32}}};
  }
  std::string taskName = taskKindName(task.kind);
  for (size_t i = 0; i < manifest.inputs.size(); ++i) {
    const TensorSpec &input = manifest.inputs[i];
    std::string path = ManifestParser::index(key::root::inputs, i);
    // CO2's outer step: fed by the trainer's schedule, not by the data.
    if (manifest.co2.localSteps > 0 && input.name.rfind("co2.", 0) == 0)
      continue;
    const Expected *match = nullptr;
    for (const Expected &e : expected)
      if (input.name == e.name)
        match = &e;
    if (!match) {
      std::string names;
      for (const Expected &e : expected)
        names += std::string(names.empty() ? "" : ", ") + e.name;
      parser.error(ManifestParser::join(path, key::tensor::name),
                   "input '" + input.name + "' is not produced by task " +
                       taskName + " (expected " + names + ")");
    }
    if (input.shape != match->shape)
      parser.error(ManifestParser::join(path, key::tensor::shape),
                   "input '" + input.name + "' of task " + taskName +
                       " must have shape " + shapeToString(match->shape) +
                       ", got " + shapeToString(input.shape));
    bool typeOk = false;
    for (DType type : match->dtypes)
      typeOk |= type == input.dtype;
    if (!typeOk)
      parser.error(ManifestParser::join(path, key::tensor::dtype),
                   "input '" + input.name + "' of task " + taskName +
                       " cannot have dtype " + dtypeName(input.dtype));
  }
  for (const Expected &e : expected)
    if (!manifest.findInput(e.name))
      parser.error(key::root::inputs, std::string("task ") + taskName +
                                          " needs an input named '" + e.name +
                                          "'");
}

EntryArg parseArg(ManifestParser &parser, const json &value,
                  const std::string &path) {
  parser.expectObject(value, path);
  auto field = [&](const char *name) {
    return std::make_pair(&parser.require(value, path, name),
                          ManifestParser::join(path, name));
  };
  EntryArg arg;
  auto [role, rolePath] = field(key::arg::role);
  arg.role = parseRole(parser, *role, rolePath);
  auto [name, namePath] = field(key::arg::name);
  arg.name = parser.string(*name, namePath);
  auto [shape, shapePath] = field(key::arg::shape);
  arg.shape = parser.shape(*shape, shapePath);
  auto [dtype, dtypePath] = field(key::arg::dtype);
  arg.dtype = parser.dtype(*dtype, dtypePath);
  return arg;
}

/// The tensor list (and its name) an argument of `role` must be declared in,
/// or null for roles that have none.
const TensorSpec *declaredTensor(const Manifest &manifest, const EntryArg &arg,
                                 const char *&listName) {
  switch (arg.role) {
  case ArgRole::Param:
    listName = key::root::params;
    return manifest.findParam(arg.name);
  case ArgRole::State:
    listName = key::root::state;
    return manifest.findState(arg.name);
  case ArgRole::Input:
    listName = key::root::inputs;
    return manifest.findInput(arg.name);
  case ArgRole::Step:
  case ArgRole::Output:
    break;
  }
  listName = nullptr;
  return nullptr;
}

/// Checks what an argument refers to: the tensor it names, or for an
/// output, the other entries' outputs of that name (which share one buffer,
/// so they must agree on shape and dtype).
void checkArg(ManifestParser &parser, const Manifest &manifest,
              const EntryArg &arg, const std::string &argPath,
              const std::set<std::string> &tensorNames,
              std::map<std::string, std::pair<Shape, DType>> &outputs) {
  std::string namePath = ManifestParser::join(argPath, key::arg::name);
  if (arg.role == ArgRole::Step &&
      (!arg.shape.empty() || arg.dtype != DType::I64))
    parser.error(argPath, "a step argument must be an i64 scalar "
                          "(shape [], dtype i64)");
  if (arg.role == ArgRole::Output) {
    if (tensorNames.count(arg.name))
      parser.error(namePath, "output '" + arg.name +
                                 "' has the name of a param, state or input");
    auto [it, inserted] = outputs.insert({arg.name, {arg.shape, arg.dtype}});
    if (!inserted &&
        (it->second.first != arg.shape || it->second.second != arg.dtype))
      parser.error(argPath,
                   "output '" + arg.name + "' is " + shapeToString(arg.shape) +
                       " " + dtypeName(arg.dtype) + " here but " +
                       shapeToString(it->second.first) + " " +
                       dtypeName(it->second.second) + " in another entry");
  }
  const char *listName = nullptr;
  const TensorSpec *declared = declaredTensor(manifest, arg, listName);
  if (!listName)
    return;
  if (!declared)
    parser.error(namePath, std::string(argRoleName(arg.role)) + " '" +
                               arg.name + "' is not declared in " + listName);
  if (declared->shape != arg.shape || declared->dtype != arg.dtype)
    parser.error(argPath, "'" + arg.name + "' is " + shapeToString(arg.shape) +
                              " " + dtypeName(arg.dtype) + " here but " +
                              shapeToString(declared->shape) + " " +
                              dtypeName(declared->dtype) + " in " + listName);
}

void parseEntries(ManifestParser &parser, const json &value,
                  Manifest &manifest) {
  parser.expectObject(value, key::root::entries);
  // Outputs with the same name in several entries share one buffer.
  std::map<std::string, std::pair<Shape, DType>> outputs;
  std::set<std::string> tensorNames;
  for (const auto *list : {&manifest.params, &manifest.state, &manifest.inputs})
    for (const TensorSpec &spec : *list)
      tensorNames.insert(spec.name);

  for (const auto &[entryName, entryValue] : value.items()) {
    std::string path = ManifestParser::join(key::root::entries, entryName);
    parser.expectObject(entryValue, path);
    EntrySpec entry;
    entry.name = entryName;
    entry.symbol =
        parser.string(parser.require(entryValue, path, key::entry::symbol),
                      ManifestParser::join(path, key::entry::symbol));
    std::string argsPath = ManifestParser::join(path, key::entry::args);
    const json &args = parser.expectArray(
        parser.require(entryValue, path, key::entry::args), argsPath);
    std::set<std::string> seen;
    for (size_t i = 0; i < args.size(); ++i) {
      std::string argPath = ManifestParser::index(argsPath, i);
      EntryArg arg = parseArg(parser, args[i], argPath);
      if (!seen.insert(arg.name).second)
        parser.error(ManifestParser::join(argPath, key::arg::name),
                     "'" + arg.name +
                         "' is passed twice to this entry "
                         "(buffers may not alias)");
      checkArg(parser, manifest, arg, argPath, tensorNames, outputs);
      entry.args.push_back(std::move(arg));
    }
    manifest.entries.emplace(entryName, std::move(entry));
  }
}

/// Where the artifact came from and which library to load.
void parseHeader(ManifestParser &parser, const json &root, Manifest &manifest) {
  manifest.formatVersion =
      parser.integer(parser.require(root, "", key::root::format_version),
                     key::root::format_version, 0);
  if (manifest.formatVersion != LOOM_ABI_VERSION)
    parser.error(key::root::format_version,
                 "artifact has format version " +
                     std::to_string(manifest.formatVersion) +
                     " but this runtime reads version " +
                     std::to_string(LOOM_ABI_VERSION) +
                     " (recompile the model with a matching loomc)");
  if (const json *generator = parser.optional(root, key::root::generator))
    manifest.generator = parser.string(*generator, key::root::generator, true);
  manifest.library = parser.string(parser.require(root, "", key::root::library),
                                   key::root::library);
  if (const json *digest = parser.optional(root, key::root::library_sha256)) {
    manifest.librarySha256 = parser.string(*digest, key::root::library_sha256);
    if (manifest.librarySha256.size() != 64 ||
        manifest.librarySha256.find_first_not_of("0123456789abcdef") !=
            std::string::npos)
      parser.error(key::root::library_sha256,
                   "must be 64 lower-case hex digits, got \"" +
                       manifest.librarySha256 + "\"");
  }
}

/// What the entry points run on: "target", and "cuda" exactly for cuda.
void parseTarget(ManifestParser &parser, const json &root, Manifest &manifest) {
  if (const json *target = parser.optional(root, key::root::target)) {
    std::string name = parser.string(*target, key::root::target);
    std::optional<Target> parsed = parseTargetName(name);
    if (!parsed)
      parser.error(key::root::target,
                   "unknown target \"" + name + "\" (expected cpu or cuda)");
    manifest.target = *parsed;
  }
  if (const json *cuda = parser.optional(root, key::root::cuda)) {
    if (manifest.target != Target::CUDA)
      parser.error(key::root::cuda, "only a cuda artifact (\"target\": "
                                    "\"cuda\") has this field");
    manifest.cuda = parser.cuda(*cuda, key::root::cuda);
  } else if (manifest.target == Target::CUDA) {
    parser.error(key::root::cuda,
                 "missing required field (a cuda artifact names the "
                 "GPU architecture of its kernels: \"cuda\": "
                 "{\"chip\": \"sm_90\"})");
  }
}

/// The optional string field `field` of the optional object `object` of
/// the document, into `into` (unchanged when either is absent).
void readNested(ManifestParser &parser, const json &root, const char *object,
                const char *field, std::string &into) {
  const json *value = parser.optional(root, object);
  if (!value)
    return;
  parser.expectObject(*value, object);
  if (const json *text = parser.optional(*value, field))
    into = parser.string(*text, ManifestParser::join(object, field), true);
}

/// How the model was compiled and what it is; checked, mostly informative.
void parseDescription(ManifestParser &parser, const json &root,
                      Manifest &manifest) {
  readNested(parser, root, key::root::compile_options,
             key::compile_options::precision, manifest.precision);
  if (const json *dtype = parser.optional(root, key::root::dtype)) {
    manifest.dtype = parser.dtype(*dtype, key::root::dtype);
    if (!isFloat(manifest.dtype))
      parser.error(key::root::dtype, "the model dtype must be f32 or f64");
  }
  readNested(parser, root, key::root::model, key::model::kind,
             manifest.modelKind);
  readNested(parser, root, key::root::model, key::model::spec,
             manifest.modelSpec);
  readNested(parser, root, key::root::optimizer, key::optimizer::kind,
             manifest.optimizerKind);
}

/// A ZeRO-sharded tensor (`kind`: "param" or "state") is a rank's slice
/// of a whole tensor split over zero.ranks ranks, which the zero object
/// gives.
void checkZeroObject(ManifestParser &parser, const Manifest &manifest,
                     const char *kind, const TensorSpec &spec,
                     const std::string &path) {
  if (!manifest.zero.enabled())
    parser.error(ManifestParser::join(path, key::tensor::sharded),
                 std::string(kind) + " '" + spec.name +
                     "' is sharded, but the manifest has no \"" +
                     key::root::zero +
                     "\" object (the ZeRO stage and the ranks the " + kind +
                     " is split over)");
}

/// A ZeRO-sharded tensor holds ceil(elements / zero.ranks) of the
/// `elements` elements of the whole tensor (`whole` names it).
void checkSliceShape(ManifestParser &parser, const Manifest &manifest,
                     const char *kind, const TensorSpec &spec,
                     const std::string &path, int64_t elements,
                     const std::string &whole) {
  const int64_t slice = manifest.zero.shardElements(elements);
  if (spec.shape != Shape{slice})
    parser.error(ManifestParser::join(path, key::tensor::shape),
                 std::string(kind) + " '" + spec.name + "' is sharded over " +
                     std::to_string(manifest.zero.ranks) +
                     " ranks (zero.ranks), so it holds ceil(" +
                     std::to_string(elements) + " / " +
                     std::to_string(manifest.zero.ranks) + ") elements of " +
                     whole + ": expected shape [" + std::to_string(slice) +
                     "], got " + shapeToString(spec.shape));
}

/// A ZeRO-sharded state tensor: a rank's slice of the state of its param
/// (ZeroSpec), so there must be a zero object, a param and the slice's
/// shape, the param's whole elements split over the ranks.
void checkShardedState(ManifestParser &parser, const Manifest &manifest,
                       const TensorSpec &spec, const std::string &path) {
  std::string shardedPath = ManifestParser::join(path, key::tensor::sharded);
  checkZeroObject(parser, manifest, "state", spec, path);
  if (spec.param.empty())
    parser.error(shardedPath, "state '" + spec.name +
                                  "' is sharded, but names no param (a "
                                  "sharded tensor is a slice of the state of "
                                  "its param)");
  // A slice of the param's whole state, or with tensor parallelism of its
  // part's (the param's own shape: ZeRO-3 does not combine with it).
  const TensorSpec &param = *manifest.findParam(spec.param);
  const int64_t elements = numElements(
      param.split.enabled() ? param.shape : manifest.wholeShape(param));
  if (elements == 0)
    parser.error(shardedPath, "state '" + spec.name + "' is sharded, but " +
                                  "its param '" + spec.param +
                                  "' has no elements (zero-size params are "
                                  "never sharded)");
  checkSliceShape(parser, manifest, "state", spec, path, elements,
                  "the state of param '" + spec.param + "'");
}

/// A ZeRO-3 param (`value`): "sharded" and "full_shape" come together, at
/// zero.stage 3 only, and its shape is a rank's slice of full_shape's
/// elements.
void parseShardedParam(ManifestParser &parser, const json &value,
                       const Manifest &manifest, TensorSpec &spec,
                       const std::string &path) {
  const std::string shardedPath =
      ManifestParser::join(path, key::tensor::sharded);
  const std::string fullPath =
      ManifestParser::join(path, key::tensor::full_shape);
  if (const json *sharded = parser.optional(value, key::tensor::sharded))
    spec.sharded = parser.boolean(*sharded, shardedPath);
  const json *full = parser.optional(value, key::tensor::full_shape);
  if (!spec.sharded) {
    if (full)
      parser.error(fullPath, "param '" + spec.name +
                                 "' is not sharded, so its shape is the "
                                 "whole tensor's (only a ZeRO-3 param, "
                                 "\"sharded\": true, has a full_shape)");
    return;
  }
  checkZeroObject(parser, manifest, "param", spec, path);
  if (manifest.zero.stage != 3)
    parser.error(shardedPath, "param '" + spec.name +
                                  "' is sharded, but zero.stage is " +
                                  std::to_string(manifest.zero.stage) +
                                  " (only stage 3 shards params)");
  if (!full)
    parser.error(fullPath, "missing required field (a sharded param is a "
                           "rank's slice of a tensor of this shape)");
  spec.fullShape = parser.shape(*full, fullPath);
  const int64_t elements = numElements(spec.fullShape);
  if (elements == 0)
    parser.error(fullPath, "param '" + spec.name +
                               "' is sharded, but has no elements (zero-size "
                               "params are never sharded)");
  checkSliceShape(parser, manifest, "param", spec, path, elements,
                  "the whole param (full_shape " +
                      shapeToString(spec.fullShape) + ")");
}

/// params, state and inputs, whose names are unique across all three.
void parseTensors(ManifestParser &parser, const json &root,
                  Manifest &manifest) {
  std::set<std::string> names;
  auto add = [&](TensorSpec spec, const std::string &path,
                 std::vector<TensorSpec> &list) {
    if (!names.insert(spec.name).second)
      parser.error(ManifestParser::join(path, key::tensor::name),
                   "duplicate tensor name '" + spec.name +
                       "' (names are unique across params, "
                       "state and inputs)");
    list.push_back(std::move(spec));
  };
  const json &params = parser.expectArray(
      parser.require(root, "", key::root::params), key::root::params);
  for (size_t i = 0; i < params.size(); ++i) {
    std::string path = ManifestParser::index(key::root::params, i);
    TensorSpec spec = parser.tensor(params[i], path, /*needsInit=*/true);
    if (!isFloat(spec.dtype))
      parser.error(ManifestParser::join(path, key::tensor::dtype),
                   "params must be f32 or f64");
    if (const json *decay =
            parser.optional(params[i], key::tensor::weight_decay))
      spec.weightDecay = parser.boolean(
          *decay, ManifestParser::join(path, key::tensor::weight_decay));
    parseShardedParam(parser, params[i], manifest, spec, path);
    parser.tensorSplit(params[i], path, manifest.mesh, spec, nullptr);
    parser.pipelineStages(params[i], path, manifest.pipeline, spec, nullptr);
    add(std::move(spec), path, manifest.params);
  }
  if (const json *state = parser.optional(root, key::root::state)) {
    parser.expectArray(*state, key::root::state);
    for (size_t i = 0; i < state->size(); ++i) {
      std::string path = ManifestParser::index(key::root::state, i);
      TensorSpec spec = parser.tensor((*state)[i], path, /*needsInit=*/false);
      // Optimizer state names its param; CO2's sharded outer state
      // (a slice of all of them) has none.
      if (const json *param =
              parser.optional((*state)[i], key::tensor::param)) {
        std::string paramPath = ManifestParser::join(path, key::tensor::param);
        spec.param = parser.string(*param, paramPath);
        if (!manifest.findParam(spec.param))
          parser.error(paramPath,
                       "names '" + spec.param + "', which is not a param");
      }
      if (const json *sharded =
              parser.optional((*state)[i], key::tensor::sharded))
        spec.sharded = parser.boolean(
            *sharded, ManifestParser::join(path, key::tensor::sharded));
      if (spec.sharded)
        checkShardedState(parser, manifest, spec, path);
      parser.tensorSplit((*state)[i], path, manifest.mesh, spec,
                         spec.param.empty() ? nullptr
                                            : manifest.findParam(spec.param));
      parser.pipelineStages(
          (*state)[i], path, manifest.pipeline, spec,
          spec.param.empty() ? nullptr : manifest.findParam(spec.param));
      add(std::move(spec), path, manifest.state);
    }
  }
  if (const json *inputs = parser.optional(root, key::root::inputs)) {
    parser.expectArray(*inputs, key::root::inputs);
    for (size_t i = 0; i < inputs->size(); ++i) {
      std::string path = ManifestParser::index(key::root::inputs, i);
      add(parser.tensor((*inputs)[i], path, /*needsInit=*/false), path,
          manifest.inputs);
    }
  }
}

Manifest parse(const std::string &text, const std::string &source,
               std::set<const char *> *keysRead) {
  ManifestParser parser(source, keysRead);
  json root;
  std::string problem;
  if (!parseJson(text.data(), text.data() + text.size(), root, problem))
    parser.error("", "invalid JSON: " + problem);
  parser.expectObject(root, "");

  Manifest manifest;
  manifest.source = source;
  parseHeader(parser, root, manifest);
  parseTarget(parser, root, manifest);
  parseDescription(parser, root, manifest);
  manifest.task =
      parser.task(parser.require(root, "", key::root::task), key::root::task);
  if (const json *mesh = parser.optional(root, key::root::mesh))
    manifest.mesh = parser.mesh(*mesh, key::root::mesh);
  if (const json *pipeline = parser.optional(root, key::root::pipeline))
    manifest.pipeline =
        parser.pipeline(*pipeline, key::root::pipeline, manifest.mesh);
  if (const json *zero = parser.optional(root, key::root::zero))
    manifest.zero = parser.zero(*zero, key::root::zero, manifest.mesh);
  parseTensors(parser, root, manifest);
  if (const json *co2 = parser.optional(root, key::root::co2))
    manifest.co2 = parser.co2(*co2, key::root::co2, manifest.mesh.ranks());
  // CO2's ranks train models of their own and save per rank; ZeRO's share
  // one model whose state they split.
  if (manifest.zero.enabled() && manifest.co2.localSteps > 0)
    parser.error(key::root::zero, "a ZeRO artifact cannot also be a CO2 one "
                                  "(loomc refuses --zero with --co2)");
  if (const json *compression = parser.optional(root, key::root::compression))
    manifest.compression =
        parser.compression(*compression, key::root::compression, manifest);
  checkTaskInputs(parser, manifest);
  parseEntries(parser, parser.require(root, "", key::root::entries), manifest);
  return manifest;
}

} // namespace

Manifest parseManifest(const std::string &text, const std::string &source) {
  return parse(text, source, nullptr);
}

Manifest parseManifestNotingKeys(const std::string &text,
                                 const std::string &source,
                                 std::set<const char *> &keysRead) {
  return parse(text, source, &keysRead);
}

Manifest readManifest(const std::string &artifactDir) {
  std::string path = artifactDir + "/manifest.json";
  std::string text;
  try {
    text = readFileText(path);
  } catch (const Error &) {
    fail("%s is not a Loom artifact: cannot read %s (expected the directory "
         "written by loomc -o)",
         artifactDir.c_str(), path.c_str());
  }
  return parseManifest(text, path);
}

} // namespace loom::rt
