//===- Init.cpp - Deterministic parameter initialisation --------*- C++ -*-===//
//
// Element i of a tensor uses draws 2i and 2i+1 of its stream (normal) or
// draw i (uniform), so values do not depend on how the fill is ordered, and
// a slice of the tensor is filled as directly as all of it.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Init.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Random.h"

#include <algorithm>

namespace loom::rt {

namespace {

/// Elements [first, first + count) of a tensor of `whole` elements; those
/// past `whole` are zero padding.
template <typename T>
void fillTyped(T *data, int64_t count, int64_t first, int64_t whole,
               const InitSpec &init, uint64_t seed, const std::string &name) {
  CounterRng rng = CounterRng::forName(seed, name);
  const int64_t valid = std::clamp<int64_t>(whole - first, 0, count);
  std::fill(data + valid, data + count, T(0));
  switch (init.kind) {
  case InitSpec::Kind::Zeros:
    std::fill(data, data + valid, T(0));
    return;
  case InitSpec::Kind::Ones:
    std::fill(data, data + valid, T(1));
    return;
  case InitSpec::Kind::Normal:
    for (int64_t i = 0; i < valid; ++i) {
      rng.seek(2 * static_cast<uint64_t>(first + i));
      data[i] = static_cast<T>(init.scale * rng.normal());
    }
    return;
  case InitSpec::Kind::Uniform:
    for (int64_t i = 0; i < valid; ++i) {
      rng.seek(static_cast<uint64_t>(first + i));
      data[i] = static_cast<T>(init.scale * (2.0 * rng.uniform() - 1.0));
    }
    return;
  }
}

} // namespace

void fillInit(void *data, DType dtype, int64_t count, const InitSpec &init,
              uint64_t seed, const std::string &name) {
  fillInitSlice(data, dtype, count, 0, count, init, seed, name);
}

void fillInitSlice(void *data, DType dtype, int64_t count, int64_t first,
                   int64_t whole, const InitSpec &init, uint64_t seed,
                   const std::string &name) {
  switch (dtype) {
  case DType::F32:
    return fillTyped(static_cast<float *>(data), count, first, whole, init,
                     seed, name);
  case DType::F64:
    return fillTyped(static_cast<double *>(data), count, first, whole, init,
                     seed, name);
  case DType::I32:
  case DType::I64:
    if (init.kind == InitSpec::Kind::Normal ||
        init.kind == InitSpec::Kind::Uniform)
      fail("tensor '%s': random init of integer tensors is not supported",
           name.c_str());
    if (dtype == DType::I32)
      return fillTyped(static_cast<int32_t *>(data), count, first, whole, init,
                       seed, name);
    return fillTyped(static_cast<int64_t *>(data), count, first, whole, init,
                     seed, name);
  }
}

} // namespace loom::rt
