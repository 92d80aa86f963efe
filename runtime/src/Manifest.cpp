//===- Manifest.cpp - Parsing and validating manifest.json ------*- C++ -*-===//
//
// Every check names the JSON path of the field at fault, e.g.
//   out/manifest.json: params[3].shape: expected a list of non-negative
//   integers, got "64"
// so a compiler bug or a hand-edited manifest is found without a debugger.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Manifest.h"
#include "FileUtil.h"
#include "JsonParse.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/abi.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdint>
#include <set>

using nlohmann::json;

namespace loom::rt {

namespace {

/// Walks the JSON document, remembering the source for messages.
class Parser {
public:
  explicit Parser(std::string source) : source(std::move(source)) {}

  [[noreturn]] void error(const std::string &path, const std::string &what) {
    if (path.empty())
      fail("%s: %s", source.c_str(), what.c_str());
    fail("%s: %s: %s", source.c_str(), path.c_str(), what.c_str());
  }

  static std::string describe(const json &value) {
    std::string text = value.dump();
    if (text.size() > 40)
      text = text.substr(0, 37) + "...";
    return text;
  }

  const json *optional(const json &object, const char *key) {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  const json &require(const json &object, const std::string &path,
                      const char *key) {
    const json *value = optional(object, key);
    if (!value)
      error(join(path, key), "missing required field");
    return *value;
  }

  static std::string join(const std::string &path, const std::string &key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string index(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  void expectObject(const json &value, const std::string &path) {
    if (!value.is_object())
      error(path, "expected an object, got " + describe(value));
  }
  const json &expectArray(const json &value, const std::string &path) {
    if (!value.is_array())
      error(path, "expected a list, got " + describe(value));
    return value;
  }

  std::string string(const json &value, const std::string &path,
                     bool allowEmpty = false) {
    if (!value.is_string())
      error(path, "expected a string, got " + describe(value));
    std::string text = value.get<std::string>();
    if (!allowEmpty && text.empty())
      error(path, "must not be empty");
    return text;
  }

  int64_t integer(const json &value, const std::string &path, int64_t min) {
    if (!value.is_number_integer() ||
        (value.is_number_unsigned() &&
         value.get<uint64_t>() > uint64_t(INT64_MAX)))
      error(path, "expected an integer, got " + describe(value));
    int64_t result = value.get<int64_t>();
    if (result < min)
      error(path, "must be at least " + std::to_string(min) + ", got " +
                      std::to_string(result));
    return result;
  }

  double number(const json &value, const std::string &path) {
    if (!value.is_number())
      error(path, "expected a number, got " + describe(value));
    return value.get<double>();
  }

  bool boolean(const json &value, const std::string &path) {
    if (!value.is_boolean())
      error(path, "expected true or false, got " + describe(value));
    return value.get<bool>();
  }

  Shape shape(const json &value, const std::string &path) {
    bool ok = value.is_array();
    Shape result;
    if (ok) {
      for (const json &dim : value) {
        if (!dim.is_number_integer() || dim.get<int64_t>() < 0) {
          ok = false;
          break;
        }
        result.push_back(dim.get<int64_t>());
      }
    }
    if (!ok)
      error(path,
            "expected a list of non-negative integers, got " + describe(value));
    // The loader computes element counts and byte sizes (8 bytes at most an
    // element) dimension by dimension; no partial product may overflow.
    if (!checkedNumElements(result, int64_t(1) << 60))
      error(path, "shape " + describe(value) +
                      " is implausibly large (more than 2^60 elements)");
    return result;
  }

  DType dtype(const json &value, const std::string &path) {
    std::string name = string(value, path);
    std::optional<DType> type = parseDTypeName(name);
    if (!type)
      error(path, "unknown dtype \"" + name +
                      "\" (expected f32, f64, i32 "
                      "or i64)");
    return *type;
  }

  InitSpec init(const json &value, const std::string &path) {
    expectObject(value, path);
    InitSpec spec;
    std::string kind = string(require(value, path, "kind"), join(path, "kind"));
    if (kind == "zeros")
      spec.kind = InitSpec::Kind::Zeros;
    else if (kind == "ones")
      spec.kind = InitSpec::Kind::Ones;
    else if (kind == "normal")
      spec.kind = InitSpec::Kind::Normal;
    else if (kind == "uniform")
      spec.kind = InitSpec::Kind::Uniform;
    else
      error(join(path, "kind"), "unknown init kind \"" + kind +
                                    "\" (expected zeros, ones, normal or "
                                    "uniform)");
    if (const json *scale = optional(value, "scale"))
      spec.scale = number(*scale, join(path, "scale"));
    else if (spec.kind == InitSpec::Kind::Normal ||
             spec.kind == InitSpec::Kind::Uniform)
      error(join(path, "scale"), "missing required field");
    if (spec.scale < 0)
      error(join(path, "scale"), "must not be negative");
    return spec;
  }

  TensorSpec tensor(const json &value, const std::string &path,
                    bool needsInit) {
    expectObject(value, path);
    TensorSpec spec;
    spec.name = string(require(value, path, "name"), join(path, "name"));
    spec.shape = shape(require(value, path, "shape"), join(path, "shape"));
    spec.dtype = dtype(require(value, path, "dtype"), join(path, "dtype"));
    if (const json *initValue = optional(value, "init"))
      spec.init = init(*initValue, join(path, "init"));
    else if (needsInit)
      error(join(path, "init"), "missing required field");
    return spec;
  }

  TaskSpec task(const json &value, const std::string &path) {
    expectObject(value, path);
    TaskSpec task;
    std::string kind = string(require(value, path, "kind"), join(path, "kind"));
    auto positive = [&](const char *key) {
      return integer(require(value, path, key), join(path, key), 1);
    };
    // Tokens and labels are int32 (the inputs' dtype).
    auto labels = [&](const char *key) {
      int64_t n = positive(key);
      if (n > INT32_MAX)
        error(join(path, key), "must be at most " + std::to_string(INT32_MAX) +
                                   " (labels are i32), got " +
                                   std::to_string(n));
      return n;
    };
    if (kind == "lm") {
      task.kind = TaskSpec::Kind::LM;
      task.batch = positive("batch");
      task.seq = positive("seq");
      task.vocab = labels("vocab");
    } else if (kind == "classify") {
      task.kind = TaskSpec::Kind::Classify;
      task.batch = positive("batch");
      task.features = positive("features");
      task.classes = labels("classes");
    } else if (kind == "none") {
      task.kind = TaskSpec::Kind::None;
      if (const json *batch = optional(value, "batch"))
        task.batch = integer(*batch, join(path, "batch"), 0);
    } else {
      error(join(path, "kind"), "unknown task kind \"" + kind +
                                    "\" (expected lm, classify or none)");
    }
    return task;
  }

  CudaSpec cuda(const json &value, const std::string &path) {
    expectObject(value, path);
    CudaSpec cuda;
    std::string chipPath = join(path, "chip");
    cuda.chip = string(require(value, path, "chip"), chipPath);
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
                          describe(value.at("chip")));
    int number = std::stoi(cuda.chip.substr(3, digits));
    cuda.major = number / 10;
    cuda.minor = number % 10;
    return cuda;
  }

  CO2Spec co2(const json &value, const std::string &path) {
    expectObject(value, path);
    CO2Spec co2;
    co2.localSteps = integer(require(value, path, "local_steps"),
                             join(path, "local_steps"), 1);
    if (const json *sharded = optional(value, "sharded")) {
      if (!sharded->is_boolean())
        error(join(path, "sharded"), "expected true or false");
      co2.sharded = sharded->get<bool>();
    }
    if (!co2.sharded)
      return co2;
    co2.shardElements = integer(require(value, path, "shard_elements"),
                                join(path, "shard_elements"), 1);
    std::string listPath = join(path, "params");
    const json &list = expectArray(require(value, path, "params"), listPath);
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string())
        error(listPath + "[" + std::to_string(i) + "]", "expected a name");
      co2.params.push_back(list[i].get<std::string>());
    }
    if (co2.params.empty())
      error(listPath, "a sharded CO2 artifact updates at least one param");
    return co2;
  }

  MeshSpec mesh(const json &value, const std::string &path) {
    expectObject(value, path);
    MeshSpec mesh;
    const json &axes =
        expectArray(require(value, path, "axes"), join(path, "axes"));
    const json &shape =
        expectArray(require(value, path, "shape"), join(path, "shape"));
    if (axes.empty())
      error(join(path, "axes"), "must name at least one axis");
    if (axes.size() != shape.size())
      error(path, "axes has " + std::to_string(axes.size()) +
                      " names but shape has " + std::to_string(shape.size()) +
                      " sizes");
    std::set<std::string> seen;
    for (size_t i = 0; i < axes.size(); ++i) {
      std::string axis = string(axes[i], index(join(path, "axes"), i));
      if (!seen.insert(axis).second)
        error(index(join(path, "axes"), i), "duplicate axis \"" + axis + "\"");
      mesh.axes.push_back(axis);
      // Bounding every partial product keeps the rank count (ranks())
      // from overflowing, however many axes there are.
      int64_t size = integer(shape[i], index(join(path, "shape"), i), 1);
      if (size > LOOM_MAX_RANKS)
        error(index(join(path, "shape"), i),
              "axis size " + std::to_string(size) + " is implausibly large");
      mesh.shape.push_back(size);
      if (mesh.ranks() > LOOM_MAX_RANKS)
        error(join(path, "shape"), "the mesh has more than 2^20 ranks");
    }
    return mesh;
  }

  std::string source;
};

ArgRole parseRole(Parser &parser, const json &value, const std::string &path) {
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
void checkTaskInputs(Parser &parser, const Manifest &manifest) {
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
  } else if (task.kind == TaskSpec::Kind::Classify) {
    expected = {{"x", {task.batch, task.features}, {DType::F32, DType::F64}},
                {"y", {task.batch}, {DType::I32}}};
  }
  std::string taskName = taskKindName(task.kind);
  for (size_t i = 0; i < manifest.inputs.size(); ++i) {
    const TensorSpec &input = manifest.inputs[i];
    std::string path = Parser::index("inputs", i);
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
      parser.error(path + ".name", "input '" + input.name +
                                       "' is not produced by task " + taskName +
                                       " (expected " + names + ")");
    }
    if (input.shape != match->shape)
      parser.error(path + ".shape", "input '" + input.name + "' of task " +
                                        taskName + " must have shape " +
                                        shapeToString(match->shape) + ", got " +
                                        shapeToString(input.shape));
    bool typeOk = false;
    for (DType type : match->dtypes)
      typeOk |= type == input.dtype;
    if (!typeOk)
      parser.error(path + ".dtype", "input '" + input.name + "' of task " +
                                        taskName + " cannot have dtype " +
                                        dtypeName(input.dtype));
  }
  for (const Expected &e : expected)
    if (!manifest.findInput(e.name))
      parser.error("inputs", std::string("task ") + taskName +
                                 " needs an input named '" + e.name + "'");
}

void parseEntries(Parser &parser, const json &value, Manifest &manifest) {
  parser.expectObject(value, "entries");
  // Outputs with the same name in several entries share one buffer, so they
  // must agree on shape and dtype.
  std::map<std::string, std::pair<Shape, DType>> outputs;
  std::set<std::string> tensorNames;
  for (const auto *list : {&manifest.params, &manifest.state, &manifest.inputs})
    for (const TensorSpec &spec : *list)
      tensorNames.insert(spec.name);

  for (const auto &[entryName, entryValue] : value.items()) {
    std::string path = "entries." + entryName;
    parser.expectObject(entryValue, path);
    EntrySpec entry;
    entry.name = entryName;
    entry.symbol = parser.string(parser.require(entryValue, path, "symbol"),
                                 path + ".symbol");
    const json &args = parser.expectArray(
        parser.require(entryValue, path, "args"), path + ".args");
    std::set<std::string> seen;
    for (size_t i = 0; i < args.size(); ++i) {
      std::string argPath = Parser::index(path + ".args", i);
      const json &argValue = args[i];
      parser.expectObject(argValue, argPath);
      EntryArg arg;
      arg.role = parseRole(parser, parser.require(argValue, argPath, "role"),
                           argPath + ".role");
      arg.name = parser.string(parser.require(argValue, argPath, "name"),
                               argPath + ".name");
      arg.shape = parser.shape(parser.require(argValue, argPath, "shape"),
                               argPath + ".shape");
      arg.dtype = parser.dtype(parser.require(argValue, argPath, "dtype"),
                               argPath + ".dtype");
      if (!seen.insert(arg.name).second)
        parser.error(argPath + ".name", "'" + arg.name +
                                            "' is passed twice to this entry "
                                            "(buffers may not alias)");

      const TensorSpec *declared = nullptr;
      const char *listName = nullptr;
      switch (arg.role) {
      case ArgRole::Param:
        declared = manifest.findParam(arg.name);
        listName = "params";
        break;
      case ArgRole::State:
        declared = manifest.findState(arg.name);
        listName = "state";
        break;
      case ArgRole::Input:
        declared = manifest.findInput(arg.name);
        listName = "inputs";
        break;
      case ArgRole::Step:
        if (!arg.shape.empty() || arg.dtype != DType::I64)
          parser.error(argPath, "a step argument must be an i64 scalar "
                                "(shape [], dtype i64)");
        break;
      case ArgRole::Output: {
        if (tensorNames.count(arg.name))
          parser.error(argPath + ".name",
                       "output '" + arg.name +
                           "' has the name of a param, state or input");
        auto [it, inserted] =
            outputs.insert({arg.name, {arg.shape, arg.dtype}});
        if (!inserted &&
            (it->second.first != arg.shape || it->second.second != arg.dtype))
          parser.error(argPath, "output '" + arg.name + "' is " +
                                    shapeToString(arg.shape) + " " +
                                    dtypeName(arg.dtype) + " here but " +
                                    shapeToString(it->second.first) + " " +
                                    dtypeName(it->second.second) +
                                    " in another entry");
        break;
      }
      }
      if (listName) {
        if (!declared)
          parser.error(argPath + ".name",
                       std::string(argRoleName(arg.role)) + " '" + arg.name +
                           "' is not declared in " + listName);
        if (declared->shape != arg.shape || declared->dtype != arg.dtype)
          parser.error(argPath,
                       "'" + arg.name + "' is " + shapeToString(arg.shape) +
                           " " + dtypeName(arg.dtype) + " here but " +
                           shapeToString(declared->shape) + " " +
                           dtypeName(declared->dtype) + " in " + listName);
      }
      entry.args.push_back(std::move(arg));
    }
    manifest.entries.emplace(entryName, std::move(entry));
  }
}

} // namespace

Manifest parseManifest(const std::string &text, const std::string &source) {
  Parser parser(source);
  json root;
  std::string problem;
  if (!parseJson(text.data(), text.data() + text.size(), root, problem))
    parser.error("", "invalid JSON: " + problem);
  parser.expectObject(root, "");

  Manifest manifest;
  manifest.source = source;
  manifest.formatVersion = parser.integer(
      parser.require(root, "", "format_version"), "format_version", 0);
  if (manifest.formatVersion != LOOM_ABI_VERSION)
    parser.error("format_version",
                 "artifact has format version " +
                     std::to_string(manifest.formatVersion) +
                     " but this runtime reads version " +
                     std::to_string(LOOM_ABI_VERSION) +
                     " (recompile the model with a matching loomc)");
  if (const json *generator = parser.optional(root, "generator"))
    manifest.generator = parser.string(*generator, "generator", true);
  manifest.library =
      parser.string(parser.require(root, "", "library"), "library");
  if (const json *digest = parser.optional(root, "library_sha256")) {
    manifest.librarySha256 = parser.string(*digest, "library_sha256");
    if (manifest.librarySha256.size() != 64 ||
        manifest.librarySha256.find_first_not_of("0123456789abcdef") !=
            std::string::npos)
      parser.error("library_sha256",
                   "must be 64 lower-case hex digits, got \"" +
                       manifest.librarySha256 + "\"");
  }
  if (const json *target = parser.optional(root, "target")) {
    std::string name = parser.string(*target, "target");
    std::optional<Target> parsed = parseTargetName(name);
    if (!parsed)
      parser.error("target",
                   "unknown target \"" + name + "\" (expected cpu or cuda)");
    manifest.target = *parsed;
  }
  if (const json *cuda = parser.optional(root, "cuda")) {
    if (manifest.target != Target::CUDA)
      parser.error("cuda", "only a cuda artifact (\"target\": \"cuda\") "
                           "has this field");
    manifest.cuda = parser.cuda(*cuda, "cuda");
  } else if (manifest.target == Target::CUDA) {
    parser.error("cuda", "missing required field (a cuda artifact names the "
                         "GPU architecture of its kernels: \"cuda\": "
                         "{\"chip\": \"sm_90\"})");
  }
  if (const json *options = parser.optional(root, "compile_options")) {
    parser.expectObject(*options, "compile_options");
    if (const json *precision = parser.optional(*options, "precision"))
      manifest.precision =
          parser.string(*precision, "compile_options.precision", true);
  }
  if (const json *dtype = parser.optional(root, "dtype")) {
    manifest.dtype = parser.dtype(*dtype, "dtype");
    if (!isFloat(manifest.dtype))
      parser.error("dtype", "the model dtype must be f32 or f64");
  }
  if (const json *model = parser.optional(root, "model")) {
    parser.expectObject(*model, "model");
    if (const json *kind = parser.optional(*model, "kind"))
      manifest.modelKind = parser.string(*kind, "model.kind", true);
    if (const json *spec = parser.optional(*model, "spec"))
      manifest.modelSpec = parser.string(*spec, "model.spec", true);
  }
  if (const json *optimizer = parser.optional(root, "optimizer")) {
    parser.expectObject(*optimizer, "optimizer");
    if (const json *kind = parser.optional(*optimizer, "kind"))
      manifest.optimizerKind = parser.string(*kind, "optimizer.kind", true);
  }
  manifest.task = parser.task(parser.require(root, "", "task"), "task");
  if (const json *mesh = parser.optional(root, "mesh"))
    manifest.mesh = parser.mesh(*mesh, "mesh");

  std::set<std::string> names;
  auto addName = [&](const TensorSpec &spec, const std::string &path) {
    if (!names.insert(spec.name).second)
      parser.error(path + ".name", "duplicate tensor name '" + spec.name +
                                       "' (names are unique across params, "
                                       "state and inputs)");
  };
  const json &params =
      parser.expectArray(parser.require(root, "", "params"), "params");
  for (size_t i = 0; i < params.size(); ++i) {
    std::string path = Parser::index("params", i);
    TensorSpec spec = parser.tensor(params[i], path, /*needsInit=*/true);
    if (!isFloat(spec.dtype))
      parser.error(path + ".dtype", "params must be f32 or f64");
    if (const json *decay = parser.optional(params[i], "weight_decay"))
      spec.weightDecay = parser.boolean(*decay, path + ".weight_decay");
    addName(spec, path);
    manifest.params.push_back(std::move(spec));
  }
  if (const json *state = parser.optional(root, "state")) {
    parser.expectArray(*state, "state");
    for (size_t i = 0; i < state->size(); ++i) {
      std::string path = Parser::index("state", i);
      TensorSpec spec = parser.tensor((*state)[i], path, /*needsInit=*/false);
      // Optimizer state names its param; CO2's sharded outer state
      // (a slice of all of them) has none.
      if (const json *param = parser.optional((*state)[i], "param")) {
        spec.param = parser.string(*param, path + ".param");
        if (!manifest.findParam(spec.param))
          parser.error(path + ".param",
                       "names '" + spec.param + "', which is not a param");
      }
      addName(spec, path);
      manifest.state.push_back(std::move(spec));
    }
  }
  if (const json *inputs = parser.optional(root, "inputs")) {
    parser.expectArray(*inputs, "inputs");
    for (size_t i = 0; i < inputs->size(); ++i) {
      std::string path = Parser::index("inputs", i);
      TensorSpec spec = parser.tensor((*inputs)[i], path, /*needsInit=*/false);
      addName(spec, path);
      manifest.inputs.push_back(std::move(spec));
    }
  }
  if (const json *co2 = parser.optional(root, "co2"))
    manifest.co2 = parser.co2(*co2, "co2");
  // The trainer's round buffer holds a shard per rank of the mesh.
  if (manifest.co2.shardElements > (int64_t(1) << 60) / manifest.mesh.ranks())
    parser.error("co2.shard_elements",
                 std::to_string(manifest.co2.shardElements) + " x " +
                     std::to_string(manifest.mesh.ranks()) +
                     " ranks is implausibly large (more than 2^60 elements)");
  checkTaskInputs(parser, manifest);
  parseEntries(parser, parser.require(root, "", "entries"), manifest);
  return manifest;
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
