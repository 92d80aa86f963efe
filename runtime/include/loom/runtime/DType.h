//===- DType.h - Element types of artifact tensors --------------*- C++ -*-===//
//
// The four element types the manifest can name (`f32`, `f64`, `i32`, `i64`),
// with the spellings used by manifest.json and by safetensors headers.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_DTYPE_H
#define LOOM_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::rt {

enum class DType { F32, F64, I32, I64 };

/// Bytes per element.
size_t dtypeSize(DType type);
/// Manifest spelling: "f32", ...
const char *dtypeName(DType type);
/// Safetensors spelling: "F32", ...
const char *dtypeSafeTensorsName(DType type);
std::optional<DType> parseDTypeName(const std::string &name);
std::optional<DType> parseSafeTensorsDType(const std::string &name);
inline bool isFloat(DType type) {
  return type == DType::F32 || type == DType::F64;
}

using Shape = std::vector<int64_t>;

/// Product of the dimensions; 1 for a scalar.
int64_t numElements(const Shape &shape);
/// The product of non-negative dimensions when every partial product (what
/// numElements computes on the way) is at most `limit`; nullopt otherwise.
/// For shapes read from files, before anything multiplies them.
std::optional<int64_t> checkedNumElements(const Shape &shape, int64_t limit);
/// "[256, 64]" as used in error messages.
std::string shapeToString(const Shape &shape);

} // namespace loom::rt

#endif // LOOM_RUNTIME_DTYPE_H
