//===- Artifact.h - A loaded artifact and its buffers -----------*- C++ -*-===//
//
// Loading an artifact dlopens its shared object, resolves every entry symbol,
// allocates one buffer per param/state/input/output name and the step
// scalar, and builds each entry's `void **args` array once. Calling an entry
// afterwards is a single indirect call with no allocation, which is what the
// training loop needs.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_ARTIFACT_H
#define LOOM_RUNTIME_ARTIFACT_H

#include "loom/runtime/Buffer.h"
#include "loom/runtime/Manifest.h"
#include "loom/runtime/abi.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loom::rt {

/// A named host tensor owned by the artifact.
class Tensor {
public:
  Tensor(std::string name, ArgRole role, Shape shape, DType dtype);

  const std::string &name() const { return tensorName; }
  ArgRole role() const { return tensorRole; }
  const Shape &shape() const { return tensorShape; }
  DType dtype() const { return tensorType; }
  int64_t numElements() const { return count; }
  size_t byteSize() const { return buffer.size(); }
  void *data() { return buffer.data(); }
  const void *data() const { return buffer.data(); }
  template <typename T>
  T *dataAs() {
    return static_cast<T *>(buffer.data());
  }
  template <typename T>
  const T *dataAs() const {
    return static_cast<const T *>(buffer.data());
  }

  /// Element `i` converted to double, whatever the dtype.
  double get(int64_t i) const;
  /// Stores `value` into element `i`, converting to the dtype.
  void set(int64_t i, double value);

private:
  std::string tensorName;
  ArgRole tensorRole;
  Shape tensorShape;
  DType tensorType;
  int64_t count;
  HostBuffer buffer;
};

/// One entry point with its argument array bound to the artifact's buffers.
class Entry {
public:
  const EntrySpec &spec() const { return *entrySpec; }
  void call() { fn(args.data()); }

private:
  friend class Artifact;
  const EntrySpec *entrySpec = nullptr;
  loom_entry_fn fn = nullptr;
  std::vector<void *> args;
};

class Artifact {
public:
  /// Loads `<dir>/manifest.json` and its library. Throws Error.
  static std::unique_ptr<Artifact> load(const std::string &dir);
  ~Artifact();
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;

  const Manifest &manifest() const { return man; }
  const std::string &directory() const { return dir; }

  bool hasEntry(const std::string &name) const;
  /// Throws Error naming the artifact if absent.
  Entry &entry(const std::string &name);

  /// Any param/state/input/output buffer by name, or nullptr.
  Tensor *findTensor(const std::string &name);
  /// Throws Error if absent.
  Tensor &tensor(const std::string &name);
  const std::vector<Tensor *> &params() { return paramList; }
  const std::vector<Tensor *> &state() { return stateList; }
  const std::vector<Tensor *> &inputs() { return inputList; }

  /// The int64 scalar passed to every `step` argument.
  int64_t &step() { return *stepValue.dataAs<int64_t>(); }

  /// Sets every param and state tensor from its init spec (see Init.h).
  void initialize(uint64_t seed);

private:
  Artifact() = default;
  Tensor &addTensor(const std::string &name, ArgRole role, const Shape &shape,
                    DType dtype);

  Manifest man;
  std::string dir;
  void *handle = nullptr;
  std::map<std::string, std::unique_ptr<Tensor>> tensors;
  std::vector<Tensor *> paramList, stateList, inputList;
  Tensor stepValue{"step", ArgRole::Step, {}, DType::I64};
  std::map<std::string, Entry> entries;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_ARTIFACT_H
