//===- SafeTensors.h - Reading and writing .safetensors files ---*- C++ -*-===//
//
// The format (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// end of the header) plus an optional "__metadata__" string map, then the raw
// little-endian tensor bytes. Using it makes Loom checkpoints loadable by
// PyTorch/HF tools and lets Loom load their weights.
//
// Reading validates everything before any tensor is handed out, so a
// truncated or corrupted file is rejected with the reason rather than
// producing garbage weights.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SAFETENSORS_H
#define LOOM_RUNTIME_SAFETENSORS_H

#include "loom/runtime/DType.h"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loom::rt {

/// A tensor to write, or one read from a file (then `data` points into the
/// SafeTensorsFile that returned it).
struct SafeTensorView {
  std::string name;
  /// The safetensors dtype string ("F32", "BF16", ...).
  std::string dtypeName;
  /// Set when the dtype is one Loom computes in.
  std::optional<DType> dtype;
  Shape shape;
  const void *data = nullptr;
  size_t byteSize = 0;
};

/// A view of a Loom tensor for writing.
SafeTensorView makeSafeTensorView(const std::string &name, DType dtype,
                                  const Shape &shape, const void *data);

/// Writes `tensors` (in order) and `metadata` to `path` and fsyncs the file.
/// Throws Error on I/O failure or duplicate names.
void writeSafeTensors(const std::string &path,
                      const std::vector<SafeTensorView> &tensors,
                      const std::map<std::string, std::string> &metadata = {});

class SafeTensorsFile {
public:
  /// Reads and validates `path`; throws Error("<path>: <reason>").
  static SafeTensorsFile read(const std::string &path);
  /// Parses an in-memory image; `source` names it in messages.
  static SafeTensorsFile parse(std::vector<char> bytes,
                               const std::string &source);

  SafeTensorsFile(SafeTensorsFile &&) = default;
  SafeTensorsFile &operator=(SafeTensorsFile &&) = default;
  // Views point into `bytes`; a copy would dangle.
  SafeTensorsFile(const SafeTensorsFile &) = delete;
  SafeTensorsFile &operator=(const SafeTensorsFile &) = delete;

  /// Tensors in file (data offset) order.
  const std::vector<SafeTensorView> &tensors() const { return views; }
  const SafeTensorView *find(const std::string &name) const;
  const std::map<std::string, std::string> &metadata() const { return meta; }

private:
  SafeTensorsFile() = default;
  std::vector<char> bytes;
  std::vector<SafeTensorView> views;
  std::map<std::string, std::string> meta;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_SAFETENSORS_H
