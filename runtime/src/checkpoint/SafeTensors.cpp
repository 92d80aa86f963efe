//===- SafeTensors.cpp - Reading and writing .safetensors files -*- C++ -*-===//
//
// Validation follows the reference implementation: the header must fit in
// the file, every tensor's byte range must match its shape and dtype, and the
// ranges must tile the data section exactly (no overlap, no gap, no trailing
// bytes). Anything else is reported as truncation or corruption.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/SafeTensors.h"
#include "checkpoint/SafeTensorsStream.h"
#include "loom/runtime/Error.h"
#include "support/FileUtil.h"
#include "support/JsonParse.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <unistd.h>

namespace loom::rt {

namespace {

/// Header lengths above this are not produced by any writer; treating them
/// as corruption avoids allocating gigabytes for a bad length field.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

/// Element sizes of every dtype the format defines, so that files holding
/// types Loom does not compute in (BF16 embeddings, ...) still validate.
size_t safeTensorsElementSize(const std::string &dtype) {
  static const std::pair<const char *, size_t> sizes[] = {
      {"F64", 8},  {"F32", 4},     {"F16", 2},     {"BF16", 2},
      {"I64", 8},  {"I32", 4},     {"I16", 2},     {"I8", 1},
      {"U64", 8},  {"U32", 4},     {"U16", 2},     {"U8", 1},
      {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"C64", 8}};
  for (const auto &[name, size] : sizes)
    if (dtype == name)
      return size;
  return 0;
}

/// A JSON value for a message, shortened.
std::string brief(const nlohmann::json &value) {
  std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

[[noreturn]] void corrupt(const std::string &source, const std::string &what) {
  fail("%s: %s", source.c_str(), what.c_str());
}

} // namespace

SafeTensorView makeSafeTensorView(const std::string &name, DType dtype,
                                  const Shape &shape, const void *data) {
  SafeTensorView view;
  view.name = name;
  view.dtype = dtype;
  view.dtypeName = dtypeSafeTensorsName(dtype);
  view.shape = shape;
  view.data = data;
  view.byteSize = static_cast<size_t>(numElements(shape)) * dtypeSize(dtype);
  return view;
}

namespace {

/// The bytes of a safetensors file before its tensors' data: the 8-byte
/// length and the JSON header of `tensors` (their data is not read).
std::string headerBytes(const std::string &path,
                        const std::vector<SafeTensorView> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const SafeTensorView &tensor : tensors) {
    if (tensor.name == "__metadata__" || !names.insert(tensor.name).second)
      fail("cannot write %s: duplicate or reserved tensor name '%s'",
           path.c_str(), tensor.name.c_str());
    header[tensor.name] = {
        {"dtype", tensor.dtypeName},
        {"shape", tensor.shape},
        {"data_offsets", {offset, offset + tensor.byteSize}}};
    offset += tensor.byteSize;
  }
  std::string headerText = header.dump();
  // Pad with spaces so the data section starts 8-byte aligned, as the
  // reference writer does.
  headerText.append((8 - headerText.size() % 8) % 8, ' ');
  std::string bytes(8, '\0');
  uint64_t headerSize = headerText.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>(headerSize >> (8 * i));
  return bytes + headerText;
}

/// The JSON header of the safetensors image at `bytes` (`size` bytes
/// long, of which at least the header must be there), and its length.
nlohmann::json parseHeader(const char *bytes, uint64_t size,
                           const std::string &source, uint64_t &headerSize) {
  if (size < 8)
    corrupt(source,
            "file is " + std::to_string(size) +
                " bytes, too short for a safetensors header (truncated?)");
  headerSize = 0;
  for (int i = 0; i < 8; ++i)
    headerSize |= uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (headerSize > kMaxHeaderBytes)
    corrupt(source,
            "header length " + std::to_string(headerSize) +
                " is implausibly large (not a safetensors file, or corrupted)");
  if (headerSize > size - 8)
    corrupt(source, "header length " + std::to_string(headerSize) +
                        " exceeds the " + std::to_string(size - 8) +
                        " bytes after the length field (truncated?)");
  nlohmann::json header;
  std::string problem;
  if (!parseJson(bytes + 8, bytes + 8 + headerSize, header, problem))
    corrupt(source, "header is not valid JSON (corrupted?): " + problem);
  if (!header.is_object())
    corrupt(source, "header is not a JSON object (corrupted?)");
  return header;
}

/// The "__metadata__" entry of a parsed header.
std::map<std::string, std::string> metadataOf(const nlohmann::json &entry,
                                              const std::string &source) {
  if (!entry.is_object())
    corrupt(source, "__metadata__ is not an object");
  std::map<std::string, std::string> meta;
  for (const auto &[key, value] : entry.items()) {
    if (!value.is_string())
      corrupt(source, "__metadata__." + key + " is not a string");
    meta[key] = value.get<std::string>();
  }
  return meta;
}

} // namespace

void writeSafeTensors(const std::string &path,
                      const std::vector<SafeTensorView> &tensors,
                      const std::map<std::string, std::string> &metadata) {
  const std::string header = headerBytes(path, tensors, metadata);
  std::vector<std::pair<const void *, size_t>> parts;
  parts.push_back({header.data(), header.size()});
  for (const SafeTensorView &tensor : tensors)
    parts.push_back({tensor.data, tensor.byteSize});
  writeFileDurable(path, parts);
}

SafeTensorsWriter::SafeTensorsWriter(
    const std::string &path, const std::vector<SafeTensorView> &tensors,
    const std::map<std::string, std::string> &metadata)
    : path(path) {
  const std::string header = headerBytes(path, tensors, metadata);
  for (const SafeTensorView &tensor : tensors)
    sizes.push_back(tensor.byteSize);
  file = std::fopen(path.c_str(), "wb");
  if (!file)
    fail("cannot write %s: %s", path.c_str(), std::strerror(errno));
  if (std::fwrite(header.data(), 1, header.size(), file) != header.size())
    fail("cannot write %s: %s", path.c_str(), std::strerror(errno));
}

SafeTensorsWriter::~SafeTensorsWriter() {
  if (file)
    std::fclose(file);
}

void SafeTensorsWriter::append(const void *data) {
  if (!file || next == sizes.size())
    fail("cannot write %s: more tensors than its header lists", path.c_str());
  const size_t size = sizes[next++];
  if (std::fwrite(data, 1, size, file) != size)
    fail("cannot write %s: %s", path.c_str(), std::strerror(errno));
}

void SafeTensorsWriter::finish() {
  if (!file || next != sizes.size())
    fail("cannot write %s: %zu of its %zu tensors were written", path.c_str(),
         next, sizes.size());
  std::FILE *closing = file;
  file = nullptr;
  const bool flushed =
      std::fflush(closing) == 0 && ::fsync(fileno(closing)) == 0;
  const int why = errno;
  if (std::fclose(closing) != 0 || !flushed)
    fail("cannot flush %s to disk: %s", path.c_str(),
         std::strerror(flushed ? errno : why));
}

std::map<std::string, std::string>
readSafeTensorsMetadata(const std::string &path) {
  // Mapped, so that only the header's pages are read.
  MappedFile mapped(path);
  uint64_t headerSize = 0;
  const nlohmann::json header =
      parseHeader(reinterpret_cast<const char *>(mapped.data()), mapped.size(),
                  path, headerSize);
  auto entry = header.find("__metadata__");
  return entry == header.end() ? std::map<std::string, std::string>{}
                               : metadataOf(*entry, path);
}

SafeTensorsFile SafeTensorsFile::read(const std::string &path) {
  return parse(readFileBytes(path), path);
}

SafeTensorsFile SafeTensorsFile::parse(std::vector<char> bytes,
                                       const std::string &source) {
  uint64_t headerSize = 0;
  const nlohmann::json header =
      parseHeader(bytes.data(), bytes.size(), source, headerSize);
  SafeTensorsFile file;
  const size_t dataStart = 8 + headerSize;
  const uint64_t dataSize = bytes.size() - dataStart;
  struct Range {
    uint64_t begin, end;
    size_t view;
  };
  std::vector<Range> ranges;
  for (const auto &[name, entry] : header.items()) {
    if (name == "__metadata__") {
      file.meta = metadataOf(entry, source);
      continue;
    }
    std::string where = "tensor '" + name + "': ";
    if (!entry.is_object())
      corrupt(source, where + "header entry is not an object");
    auto dtype = entry.find("dtype");
    auto shape = entry.find("shape");
    auto offsets = entry.find("data_offsets");
    if (dtype == entry.end() || !dtype->is_string())
      corrupt(source, where + "missing or non-string dtype");
    if (shape == entry.end() || !shape->is_array())
      corrupt(source, where + "missing or non-list shape");
    if (offsets == entry.end() || !offsets->is_array() ||
        offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned())
      corrupt(source, where + "data_offsets must be two non-negative integers");

    SafeTensorView view;
    view.name = name;
    view.dtypeName = dtype->get<std::string>();
    view.dtype = parseSafeTensorsDType(view.dtypeName);
    size_t elementSize = safeTensorsElementSize(view.dtypeName);
    if (!elementSize)
      corrupt(source, where + "unknown dtype \"" + view.dtypeName + "\"");
    // No partial product of the element count may overflow (like the
    // reference reader's checked product), nor the byte size.
    bool overflow = false;
    for (const auto &dim : *shape) {
      if (!dim.is_number_unsigned())
        corrupt(source, where + "shape must hold non-negative integers");
      uint64_t size = dim.get<uint64_t>();
      overflow = overflow || size > uint64_t(INT64_MAX);
      view.shape.push_back(static_cast<int64_t>(size));
    }
    std::optional<int64_t> elements;
    if (!overflow)
      elements = checkedNumElements(view.shape, INT64_MAX);
    uint64_t expected = 0;
    if (!elements ||
        __builtin_mul_overflow(uint64_t(*elements), elementSize, &expected))
      corrupt(source, where + "shape " + brief(*shape) + " of " +
                          view.dtypeName +
                          " is too large: its byte size overflows 64 bits "
                          "(corrupted header)");
    uint64_t begin = (*offsets)[0].get<uint64_t>();
    uint64_t end = (*offsets)[1].get<uint64_t>();
    if (end < begin || end - begin != expected)
      corrupt(source, where + "data_offsets [" + std::to_string(begin) + ", " +
                          std::to_string(end) + "] do not hold the " +
                          std::to_string(expected) + " bytes of a " +
                          view.dtypeName + " " + shapeToString(view.shape) +
                          " tensor (corrupted header)");
    if (end > dataSize)
      corrupt(source, where + "data ends at byte " + std::to_string(end) +
                          " but the file holds only " +
                          std::to_string(dataSize) +
                          " data bytes (truncated?)");
    view.byteSize = static_cast<size_t>(expected);
    ranges.push_back({begin, end, file.views.size()});
    file.views.push_back(std::move(view));
  }

  std::sort(ranges.begin(), ranges.end(),
            [](const Range &a, const Range &b) { return a.begin < b.begin; });
  uint64_t cursor = 0;
  for (const Range &range : ranges) {
    if (range.begin != cursor)
      corrupt(source,
              "tensor '" + file.views[range.view].name + "' starts at byte " +
                  std::to_string(range.begin) +
                  " but the previous data ends at " + std::to_string(cursor) +
                  " (overlapping or non-contiguous tensors: corrupted header)");
    cursor = range.end;
  }
  if (cursor != dataSize)
    corrupt(source, "the tensors cover " + std::to_string(cursor) +
                        " bytes but the file " + "has " +
                        std::to_string(dataSize) +
                        " data bytes (trailing garbage or a corrupted header)");

  file.bytes = std::move(bytes);
  // Views point into `bytes`, whose heap block moves with the object.
  std::vector<SafeTensorView> ordered;
  for (const Range &range : ranges) {
    SafeTensorView view = std::move(file.views[range.view]);
    view.data = file.bytes.data() + dataStart + range.begin;
    ordered.push_back(std::move(view));
  }
  file.views = std::move(ordered);
  return file;
}

const SafeTensorView *SafeTensorsFile::find(const std::string &name) const {
  for (const SafeTensorView &view : views)
    if (view.name == name)
      return &view;
  return nullptr;
}

} // namespace loom::rt
