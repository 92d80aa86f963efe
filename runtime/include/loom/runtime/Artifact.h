//===- Artifact.h - A loaded artifact and its buffers -----------*- C++ -*-===//
//
// Loading an artifact dlopens its shared object, resolves every entry symbol,
// allocates one buffer per param/state/input/output name and the step
// scalar, and builds each entry's `void **args` array once. Calling an entry
// afterwards is a single indirect call with no allocation, which is what the
// training loop needs.
//
// A cuda artifact (manifest "target": "cuda") runs on this rank's GPU: the
// loader opens it first (src/device/Device.h), and every tensor gets a
// device buffer besides its host buffer. Entries see only the device
// buffers; the rest of the runtime (data loaders, init, checkpoints, the
// trainer's loss) reads and writes the host buffers, and the sync points
// below copy between the two. For a cpu artifact they do nothing, so callers
// place them unconditionally:
//   upload: uploadInputs() before each entry call (batch + step scalar),
//           uploadModel() after the host changed params/state (initialize()
//           uploads by itself; checkpoint loads do not), upload(tensor);
//   download: downloadOutputs({...}) after a call, before reading those
//           outputs; downloadModel() before reading params/state (saving,
//           comparing replicas); download(tensor).
// Downloads wait for the device, and are where an asynchronous device
// failure surfaces (as an Error).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_ARTIFACT_H
#define LOOM_RUNTIME_ARTIFACT_H

#include "loom/runtime/Buffer.h"
#include "loom/runtime/Manifest.h"
#include "loom/runtime/abi.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
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

  /// The device copy of a cuda artifact's tensor (what entries see); nullptr
  /// for a cpu artifact.
  void *deviceData() const { return deviceBuffer; }

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
  void *deviceBuffer = nullptr;
  friend class Artifact;
};

/// Host copies of `tensors` (names, roles, shapes, values), owned by
/// `copies`; returns pointers to them in order. Copies `copies` already
/// holds of tensors named and shaped alike are overwritten in place: a
/// fresh buffer costs a page fault per 4 KiB on first touch, hundreds of
/// thousands for a large model (what a save holds while training goes on,
/// or a model to average).
std::vector<Tensor *> copyTensors(const std::vector<Tensor *> &tensors,
                                  std::vector<std::unique_ptr<Tensor>> &copies);

class Device;

/// One entry point with its argument array bound to the artifact's buffers.
class Entry {
public:
  const EntrySpec &spec() const { return *entrySpec; }
  /// Runs the entry point. A cuda artifact's entry runs marked as device
  /// code, so that the loom_rt_* collectives it calls take device buffers
  /// (any other caller's take host buffers).
  void call();

private:
  friend class Artifact;
  const EntrySpec *entrySpec = nullptr;
  loom_entry_fn fn = nullptr;
  Device *device = nullptr;
  std::vector<void *> args;
};

struct ArtifactOptions {
  /// Where to run (loom-run --device); empty: the artifact's own target. An
  /// artifact runs only on the target it was compiled for, so another value
  /// is an error that says how to recompile.
  std::optional<Target> target;
};

/// Where an artifact tensor lies in the checkpoint tensor of its name.
struct SliceOf {
  SliceOf(Shape wholeShape = {}, int64_t first = 0)
      : wholeShape(std::move(wholeShape)), first(first) {}

  /// The checkpoint tensor's shape (Manifest::wholeShape): a sharded
  /// param's full_shape, a sharded state tensor's param's whole shape.
  Shape wholeShape;
  /// The element where the artifact tensor starts in the row-major
  /// flattening of the whole, or of the part where `split` is enabled: 0,
  /// or for a ZeRO slice rank r's r x (its element count).
  int64_t first = 0;
  /// A tensor-parallel part (TensorSplitSpec): part `part` of every block,
  /// in runs of contiguous elements (a ZeRO slice of it from `first`).
  TensorSplitSpec split;
  int64_t part = 0;

  /// How many of the artifact tensor's first `count` elements lie in the
  /// whole (a ZeRO slice's last rank holds padding past its end).
  int64_t available(int64_t count) const;
  /// Calls fn(wholeOffset, offset, length) for each run of the artifact
  /// tensor's first `count` elements that is contiguous in the whole: one
  /// run from `first`, or a part's runs; none past the whole's end.
  template <typename Fn>
  void forEachRun(int64_t count, Fn fn) const {
    count = available(count);
    if (!split.enabled())
      return count > 0 ? fn(first, int64_t(0), count) : void();
    auto [runs, length] = runShape();
    for (int64_t k = first / length; k < runs && k * length < first + count;
         ++k) {
      const int64_t from = std::max(first, k * length);
      const int64_t to = std::min(first + count, (k + 1) * length);
      fn(runStart(k) + from - k * length, from - first, to - from);
    }
  }
  /// Element `i` of the artifact tensor's place in the whole.
  int64_t wholeIndex(int64_t i) const {
    if (!split.enabled())
      return first + i;
    int64_t length = runShape().second, j = first + i;
    return runStart(j / length) + j % length;
  }

private:
  /// A part's run count and length.
  std::pair<int64_t, int64_t> runShape() const;
  /// Where run k starts in the whole.
  int64_t runStart(int64_t k) const;
};

/// The manifest's spec of `tensor` if it is a ZeRO-sharded param or state
/// tensor (docs/zero.md), else null.
const TensorSpec *shardedSpec(const Manifest &manifest, const Tensor &tensor);

/// `tensor` of the artifact `manifest` describes, on rank `rank` of the
/// job: all of the checkpoint tensor, a tensor-parallel part of it, or a
/// ZeRO slice of either (over the "dp" axis, Manifest::zeroRank).
/// Initialisation fills it so (Artifact::initialize) and loads copy it so
/// (CheckpointLoad.cpp).
SliceOf sliceOf(const Manifest &manifest, const Tensor &tensor, int rank);

class Artifact {
public:
  /// Loads `<dir>/manifest.json` and its library; for a cuda artifact opens
  /// the GPU first. Throws Error.
  static std::unique_ptr<Artifact> load(const std::string &dir,
                                        const ArtifactOptions &options = {});
  ~Artifact();
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;

  const Manifest &manifest() const { return man; }
  const std::string &directory() const { return dir; }
  /// SHA-256 of the manifest's and the library's digests: equal for two
  /// copies of one artifact, different for any recompile that changes
  /// either. Reads both files (milliseconds). Throws Error.
  std::string contentDigest() const;

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

  /// Sets every param and state tensor from its init spec (see Init.h) and
  /// uploads them. A ZeRO artifact's sharded tensors get rank `rank`'s slice
  /// of the values the whole tensors get, so that its ranks start from the
  /// model an artifact without ZeRO starts from. A pipelined artifact
  /// first becomes rank `rank`'s stage (selectPipelineStage).
  void initialize(uint64_t seed, int rank = 0);

  /// Of a pipelined artifact (manifest "pipeline"), keeps what the stage of
  /// rank `rank` holds and runs: its params and state (manifest() and
  /// params()/state() then list those only) and its entries, under their
  /// names without the stage suffix. Once; a no-op for other artifacts.
  void selectPipelineStage(int rank);
  /// The manifest as read: of a pipelined artifact, with every stage's
  /// params and state (checkpoints hold them all).
  const Manifest &manifestOfAllStages() const {
    return allStages ? *allStages : man;
  }

  /// Where the entries run: the manifest's target.
  Target target() const { return man.target; }
  bool onDevice() const { return device != nullptr; }

  /// Sync points between host and device buffers (see the file comment);
  /// no-ops for a cpu artifact. Throw Error on a device failure.
  void uploadInputs();
  void uploadModel();
  void upload(Tensor &tensor);
  /// Null entries are skipped (optional outputs).
  void downloadOutputs(std::initializer_list<Tensor *> outputs);
  void downloadModel();
  void download(Tensor &tensor);
  /// Blocks until the device has finished what was issued so far.
  void synchronize();

  /// The most device memory in use at once so far (parameters, optimizer
  /// state, temporaries), in bytes; 0 for a cpu artifact.
  uint64_t peakDeviceBytes() const;

private:
  Artifact() = default;
  Tensor &addTensor(const std::string &name, ArgRole role, const Shape &shape,
                    DType dtype);
  /// Gives `tensor` its device buffer (device mode only).
  void attachDevice(Tensor &tensor);
  /// Throws Error("<what>: <device failure>") after a failed synchronize.
  void synchronizeFor(const char *what);

  Manifest man;
  std::string dir;
  std::string libraryPath;
  void *handle = nullptr;
  /// The GPU of a cuda artifact; nullptr for cpu.
  Device *device = nullptr;
  std::map<std::string, std::unique_ptr<Tensor>> tensors;
  std::vector<Tensor *> paramList, stateList, inputList;
  Tensor stepValue{"step", ArgRole::Step, {}, DType::I64};
  std::map<std::string, Entry> entries;
  bool stageSelected = false;
  std::unique_ptr<Manifest> allStages;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_ARTIFACT_H
