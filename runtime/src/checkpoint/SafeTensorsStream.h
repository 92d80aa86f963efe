//===- SafeTensorsStream.h - safetensors files a piece at a time -*- C++
//-*-===//
//
// Internal to the runtime. A ZeRO-3 save writes the whole model while it
// gathers it one parameter at a time (ZeroShards.h), so that no rank holds
// more than one whole parameter beyond its slices; and a ZeRO load reads
// the metadata of every rank's shard to tell a shard of another checkpoint
// from a damaged one, without reading the tensors.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CHECKPOINT_SAFETENSORSSTREAM_H
#define LOOM_RUNTIME_SRC_CHECKPOINT_SAFETENSORSSTREAM_H

#include "loom/runtime/SafeTensors.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace loom::rt {

/// Writes a safetensors file whose tensors arrive one at a time: the file
/// writeSafeTensors writes for the same tensors and metadata.
class SafeTensorsWriter {
public:
  /// Creates `path` and writes the header of `tensors` (their names,
  /// dtypes and shapes; `data` is not read). Throws Error.
  SafeTensorsWriter(const std::string &path,
                    const std::vector<SafeTensorView> &tensors,
                    const std::map<std::string, std::string> &metadata);
  /// Closes the file if finish() did not (an incomplete file).
  ~SafeTensorsWriter();
  SafeTensorsWriter(const SafeTensorsWriter &) = delete;
  SafeTensorsWriter &operator=(const SafeTensorsWriter &) = delete;

  /// The next tensor's bytes, as many as its shape and dtype hold. Throws
  /// Error.
  void append(const void *data);
  /// After every tensor: fsyncs and closes the file. Throws Error.
  void finish();

private:
  std::string path;
  std::vector<size_t> sizes;
  size_t next = 0;
  std::FILE *file = nullptr;
};

/// The "__metadata__" of safetensors file `path`, reading its header only.
/// Throws Error("<path>: <reason>") if the header cannot be read.
std::map<std::string, std::string>
readSafeTensorsMetadata(const std::string &path);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_CHECKPOINT_SAFETENSORSSTREAM_H
