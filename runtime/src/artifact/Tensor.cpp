//===- Tensor.cpp - A named host tensor -------------------------*- C++ -*-===//
//
// Apart from Artifact.cpp so that code that only fills tensors (the data
// sources) links without the artifact loader (runtime/fuzz).
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Artifact.h"

#include <cstring>

namespace loom::rt {

Tensor::Tensor(std::string name, ArgRole role, Shape shape, DType dtype)
    : tensorName(std::move(name)), tensorRole(role),
      tensorShape(std::move(shape)), tensorType(dtype),
      count(loom::rt::numElements(tensorShape)),
      buffer(static_cast<size_t>(count) * dtypeSize(dtype)) {}

double Tensor::get(int64_t i) const {
  switch (tensorType) {
  case DType::F32:
    return dataAs<float>()[i];
  case DType::F64:
    return dataAs<double>()[i];
  case DType::I32:
    return dataAs<int32_t>()[i];
  case DType::I64:
    return static_cast<double>(dataAs<int64_t>()[i]);
  }
  return 0;
}

void Tensor::set(int64_t i, double value) {
  switch (tensorType) {
  case DType::F32:
    dataAs<float>()[i] = static_cast<float>(value);
    return;
  case DType::F64:
    dataAs<double>()[i] = value;
    return;
  case DType::I32:
    dataAs<int32_t>()[i] = static_cast<int32_t>(value);
    return;
  case DType::I64:
    dataAs<int64_t>()[i] = static_cast<int64_t>(value);
    return;
  }
}

std::vector<Tensor *>
copyTensors(const std::vector<Tensor *> &tensors,
            std::vector<std::unique_ptr<Tensor>> &copies) {
  auto alike = [](const Tensor &a, const Tensor &b) {
    return a.name() == b.name() && a.role() == b.role() &&
           a.shape() == b.shape() && a.dtype() == b.dtype();
  };
  bool reuse = copies.size() == tensors.size();
  for (size_t i = 0; reuse && i < tensors.size(); ++i)
    reuse = alike(*copies[i], *tensors[i]);
  if (!reuse) {
    copies.clear();
    for (const Tensor *t : tensors)
      copies.push_back(std::make_unique<Tensor>(t->name(), t->role(),
                                                t->shape(), t->dtype()));
  }
  std::vector<Tensor *> pointers;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::memcpy(copies[i]->data(), tensors[i]->data(), tensors[i]->byteSize());
    pointers.push_back(copies[i].get());
  }
  return pointers;
}

} // namespace loom::rt
