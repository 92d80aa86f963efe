//===- ManifestParser.h - Reading manifest.json's fields --------*- C++ -*-===//
//
// Internal to the runtime's manifest layer: the JSON reader every part of
// the manifest is parsed with. Each check names the JSON path of the field
// at fault and the file (`source`); every key is looked up through
// optional() or require(), which note it for the schema test
// (parseManifestNotingKeys).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_MANIFEST_MANIFESTPARSER_H
#define LOOM_RUNTIME_SRC_MANIFEST_MANIFESTPARSER_H

#include "loom/runtime/Error.h"
#include "loom/runtime/Manifest.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace loom::rt {

using nlohmann::json;

/// Walks the JSON document, remembering the source for messages.
class ManifestParser {
public:
  ManifestParser(std::string source, std::set<const char *> *keysRead)
      : source(std::move(source)), keysRead(keysRead) {}

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

  /// `field` is a key of ManifestSchema.h (loom::manifest::...).
  const json *optional(const json &object, const char *field) {
    if (keysRead)
      keysRead->insert(field);
    auto it = object.find(field);
    return it == object.end() ? nullptr : &*it;
  }

  const json &require(const json &object, const std::string &path,
                      const char *field) {
    const json *value = optional(object, field);
    if (!value)
      error(join(path, field), "missing required field");
    return *value;
  }

  static std::string join(const std::string &path, const std::string &field) {
    return path.empty() ? field : path + "." + field;
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

  // The manifest's objects, each checked where it is read: the tensors
  // and task in Manifest.cpp, the distribution (mesh, CO2, ZeRO, gradient
  // compression) in ManifestDistribution.cpp.
  InitSpec init(const json &value, const std::string &path);
  TensorSpec tensor(const json &value, const std::string &path, bool needsInit);
  TaskSpec task(const json &value, const std::string &path);
  CudaSpec cuda(const json &value, const std::string &path);
  /// `ranks`: the mesh's, over which a sharded artifact's state is split.
  CO2Spec co2(const json &value, const std::string &path, int64_t ranks);
  /// co2.layout, as --loom-co2 laid it out: a slice per rank, each at the
  /// start of the rank's shard (the collectives move equal shards), full up
  /// to the last parameter element, after which there must be room for the
  /// loss slot. Whether they cover co2.params is the trainer's to check
  /// (CO2Rounds), which resolves the names.
  std::vector<CO2Shard> co2Layout(const json &co2, const std::string &co2Path,
                                  int64_t shardElements, int64_t ranks);
  MeshSpec mesh(const json &value, const std::string &path);
  /// `mesh`: the artifact's; ZeRO splits the state over all of its ranks.
  ZeroSpec zero(const json &value, const std::string &path,
                const MeshSpec &mesh);
  CompressionSpec compression(const json &value, const std::string &path,
                              const Manifest &manifest);
  /// A tensor's `tensor_split` (in `value`, the tensor's object), if any,
  /// into `spec.split` and the whole shape into `spec.fullShape`. `owner`:
  /// a state tensor's param, whose split it must share.
  void tensorSplit(const json &value, const std::string &path,
                   const MeshSpec &mesh, TensorSpec &spec,
                   const TensorSpec *owner);

  PipelineSpec pipeline(const json &value, const std::string &path,
                        const MeshSpec &mesh);
  /// A tensor's `pipeline_stages`, if any, into `spec.pipelineStages`.
  /// `owner`: a state tensor's param, whose stages it must share.
  void pipelineStages(const json &value, const std::string &path,
                      const PipelineSpec &pipeline, TensorSpec &spec,
                      const TensorSpec *owner);

  std::string source;
  /// Where parseManifestNotingKeys wants the keys looked up; usually null.
  std::set<const char *> *keysRead;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_MANIFEST_MANIFESTPARSER_H
