//===- SafeTensorsFuzz.cpp - Fuzz target: the safetensors reader -*- C++ -*-=//
//
// Parses the input as a .safetensors file, then uses what was accepted the
// way checkpoint loading does: reads every byte of every tensor (ASan sees
// any view reaching past the file), computes element counts from the shapes,
// looks tensors up by name and reads the metadata. An accepted file must be
// what the reader promises: tensors in offset order tiling the data section,
// each holding exactly shape x element size bytes.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"
#include "loom/runtime/SafeTensors.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace loom::rt;
using loom::fuzz::violated;

namespace {

constexpr const char *kSource = "fuzz.safetensors";

/// Element count of `shape`, or false if it overflows.
bool checkedElements(const Shape &shape, uint64_t &count) {
  count = 1;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(count, uint64_t(dim), &count))
      return false;
  return true;
}

void use(const SafeTensorsFile &file, const uint8_t *data, size_t size) {
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i)
    headerSize |= uint64_t(data[i]) << (8 * i);
  const uint64_t dataSize = size - 8 - headerSize;
  uint64_t covered = 0;
  const uint8_t *next = nullptr;
  unsigned sum = 0;
  for (const SafeTensorView &view : file.tensors()) {
    const auto *bytes = static_cast<const uint8_t *>(view.data);
    if (next && bytes != next)
      violated("tensor '" + view.name +
               "' does not start where the previous one ends");
    next = bytes + view.byteSize;
    covered += view.byteSize;
    for (size_t i = 0; i < view.byteSize; ++i)
      sum += bytes[i];

    uint64_t count;
    if (!checkedElements(view.shape, count))
      violated("tensor '" + view.name + "': its element count overflows");
    if (numElements(view.shape) != static_cast<int64_t>(count))
      violated("tensor '" + view.name + "': numElements disagrees");
    // Every safetensors dtype has 1, 2, 4 or 8 bytes an element.
    uint64_t elementSize = count ? view.byteSize / count : 0;
    bool sizeOk = count ? view.byteSize % count == 0 &&
                              (elementSize == 1 || elementSize == 2 ||
                               elementSize == 4 || elementSize == 8)
                        : view.byteSize == 0;
    if (!sizeOk)
      violated("tensor '" + view.name + "': " + std::to_string(view.byteSize) +
               " bytes do not hold " + std::to_string(count) + " elements");
    if (view.dtype && view.byteSize != count * dtypeSize(*view.dtype))
      violated("tensor '" + view.name + "': size disagrees with its dtype");

    const SafeTensorView *found = file.find(view.name);
    if (!found || found->name != view.name)
      violated("find() does not return tensor '" + view.name + "'");
    if (found != &view)
      violated("two tensors are named '" + view.name + "'");
    if (view.name == "__metadata__")
      violated("a tensor is named __metadata__");
    sum += found->dtypeName.size() + found->shape.size();
  }
  if (covered != dataSize)
    violated("the tensors cover " + std::to_string(covered) + " of " +
             std::to_string(dataSize) + " data bytes");
  for (const auto &[key, value] : file.metadata())
    sum += key.size() + value.size();
  // Keeps the reads above from being optimized away.
  volatile unsigned sink = sum;
  (void)sink;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    SafeTensorsFile file =
        SafeTensorsFile::parse(std::vector<char>(data, data + size), kSource);
    use(file, data, size);
  } catch (const Error &error) {
    loom::fuzz::checkNamesSource(error, kSource);
  }
  return 0;
}
