//===- DType.cpp - Element types of artifact tensors ------------*- C++ -*-===//
//
// Names and sizes of the element types; shape helpers.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/DType.h"

namespace loom::rt {

size_t dtypeSize(DType type) {
  switch (type) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  }
  return 0;
}

const char *dtypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "?";
}

const char *dtypeSafeTensorsName(DType type) {
  switch (type) {
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  }
  return "?";
}

std::optional<DType> parseDTypeName(const std::string &name) {
  for (DType type : {DType::F32, DType::F64, DType::I32, DType::I64})
    if (name == dtypeName(type))
      return type;
  return std::nullopt;
}

std::optional<DType> parseSafeTensorsDType(const std::string &name) {
  for (DType type : {DType::F32, DType::F64, DType::I32, DType::I64})
    if (name == dtypeSafeTensorsName(type))
      return type;
  return std::nullopt;
}

int64_t numElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

std::optional<int64_t> checkedNumElements(const Shape &shape, int64_t limit) {
  int64_t count = 1;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count) || count > limit)
      return std::nullopt;
  return count;
}

std::string shapeToString(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

} // namespace loom::rt
