//===- Artifact.cpp - A loaded artifact and its buffers ---------*- C++ -*-===//
//
// dlopen + symbol lookup + buffer allocation + argument arrays, and for a
// cuda artifact the device buffers and the host/device sync points.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Artifact.h"
#include "device/Device.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Init.h"
#include "loom/runtime/Sha256.h"
#include "support/FileUtil.h"
#include "support/JsonParse.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <sys/stat.h>

namespace loom::rt {

Tensor &Artifact::addTensor(const std::string &name, ArgRole role,
                            const Shape &shape, DType dtype) {
  auto tensor = std::make_unique<Tensor>(name, role, shape, dtype);
  Tensor &result = *tensor;
  if (device)
    attachDevice(result);
  tensors.emplace(name, std::move(tensor));
  return result;
}

/// Artifacts resolve the abi.h services from the global symbol scope. That
/// holds when an executable links libLoomRuntime.so, but not when a host
/// (say, Python's ctypes) dlopen'ed this library RTLD_LOCAL, so promote it.
static void exportRuntimeSymbols() {
  static const bool once = [] {
    Dl_info info;
    if (::dladdr(reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc),
                 &info) &&
        info.dli_fname)
      ::dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    return true;
  }();
  (void)once;
}

namespace {

/// Refuses to run `manifest` on `wanted`, saying how to get an artifact that
/// runs there; and refuses what the runtime cannot yet do on a GPU.
void checkTarget(const Manifest &manifest, const std::string &dir,
                 std::optional<Target> wanted) {
  Target compiled = manifest.target;
  if (wanted && *wanted != compiled)
    fail("%s was compiled for %s, not %s; recompile it with `loomc "
         "--target=%s` or run it with --device %s",
         dir.c_str(), targetName(compiled), targetName(*wanted),
         targetName(*wanted), targetName(compiled));
  if (compiled == Target::CUDA && manifest.entries.count(LOOM_ZO_FLUSH_ENTRY))
    fail("%s: zeroth-order training with offloaded parameters (loomc "
         "--zo=mezo:offload=1) compiles for cuda but does not run there yet: "
         "the runtime keeps every parameter on the GPU and has no copy stream "
         "for its transfers; run it on the cpu target (docs/zo.md)",
         manifest.source.c_str());
  if (compiled == Target::CUDA && manifest.co2.localSteps > 0)
    fail("%s: CO2 artifacts (loomc --co2) are not supported on cuda yet: "
         "their outer rounds copy host buffers between steps; compile with "
         "--target=cpu or without --co2",
         manifest.source.c_str());
}

/// The GPU a cuda artifact runs on, checked against the architecture its
/// kernels were compiled for.
Device &openDeviceFor(const Manifest &manifest, const std::string &dir) {
  Device *device = nullptr;
  try {
    device = &openCudaDevice();
  } catch (const Error &e) {
    fail("cannot run %s (compiled for cuda): %s", dir.c_str(), e.what());
  }
  // A cubin runs on its own major architecture from its minor version up;
  // nothing runs on an older GPU. (A newer major version is left to the
  // module load, which succeeds when the artifact carries PTX.)
  const CudaSpec &chip = manifest.cuda;
  int major = device->computeMajor(), minor = device->computeMinor();
  if (major < chip.major || (major == chip.major && minor < chip.minor))
    fail("%s was compiled for %s, which %s cannot run (it is sm_%d%d); "
         "recompile it for sm_%d%d",
         dir.c_str(), chip.chip.c_str(), device->describe().c_str(), major,
         minor, major, minor);
  return *device;
}

} // namespace

std::unique_ptr<Artifact> Artifact::load(const std::string &dir,
                                         const ArtifactOptions &options) {
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0)
    fail("artifact directory %s does not exist", dir.c_str());
  if (!S_ISDIR(info.st_mode))
    fail("%s is not an artifact directory (expected the directory written by "
         "loomc -o)",
         dir.c_str());

  std::unique_ptr<Artifact> artifact(new Artifact());
  artifact->dir = dir;
  artifact->man = readManifest(dir);
  const Manifest &manifest = artifact->man;
  checkTarget(manifest, dir, options.target);

  std::string library = manifest.library;
  if (library.empty() || library[0] != '/')
    library = dir + "/" + library;
  if (::stat(library.c_str(), &info) != 0)
    fail("%s: library: %s does not exist", manifest.source.c_str(),
         library.c_str());
  artifact->libraryPath = library;
  // Before its constructors run: a library from another compilation would
  // be called with this manifest's tensors.
  if (!manifest.librarySha256.empty()) {
    std::string digest = sha256FileHex(library);
    if (digest != manifest.librarySha256)
      fail("%s does not belong to %s: its SHA-256 is %s, the manifest's "
           "library_sha256 is %s (the directory mixes files of two "
           "compilations; recompile the model with loomc)",
           library.c_str(), manifest.source.c_str(), digest.c_str(),
           manifest.librarySha256.c_str());
  }
  // A cuda artifact's global constructors load its kernels (mgpuModuleLoad),
  // so the GPU is opened, and libLoomCuda.so's services made global, before
  // the library is.
  if (manifest.target == Target::CUDA) {
    Device &device = openDeviceFor(manifest, dir);
    device.takeDeferredError(); // not this artifact's
    artifact->device = &device;
    retainActiveDevice(device);
  }
  exportRuntimeSymbols();
  // RTLD_NOW: an artifact that needs a runtime service this library does not
  // provide fails here, with the symbol's name, not mid-training.
  artifact->handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!artifact->handle)
    fail("cannot load %s: %s", library.c_str(), ::dlerror());
  if (artifact->device) {
    std::string deferred = artifact->device->takeDeferredError();
    if (!deferred.empty())
      fail("cannot load %s: %s", library.c_str(), deferred.c_str());
    artifact->attachDevice(artifact->stepValue);
  }

  for (const TensorSpec &spec : manifest.params)
    artifact->paramList.push_back(&artifact->addTensor(
        spec.name, ArgRole::Param, spec.shape, spec.dtype));
  for (const TensorSpec &spec : manifest.state)
    artifact->stateList.push_back(&artifact->addTensor(
        spec.name, ArgRole::State, spec.shape, spec.dtype));
  for (const TensorSpec &spec : manifest.inputs)
    artifact->inputList.push_back(&artifact->addTensor(
        spec.name, ArgRole::Input, spec.shape, spec.dtype));

  // Entries of a cuda artifact get the device buffers (abi.h).
  auto argument = [&](Tensor &tensor) {
    return artifact->device ? tensor.deviceData() : tensor.data();
  };
  for (const auto &[name, spec] : manifest.entries) {
    Entry entry;
    entry.entrySpec = &spec;
    ::dlerror();
    void *symbol = ::dlsym(artifact->handle, spec.symbol.c_str());
    if (!symbol)
      fail("%s: entries.%s.symbol: %s does not export '%s'",
           manifest.source.c_str(), name.c_str(), library.c_str(),
           spec.symbol.c_str());
    entry.fn = reinterpret_cast<loom_entry_fn>(symbol);
    entry.device = artifact->device;
    for (const EntryArg &arg : spec.args) {
      if (arg.role == ArgRole::Step) {
        entry.args.push_back(argument(artifact->stepValue));
        continue;
      }
      Tensor *tensor = artifact->findTensor(arg.name);
      if (!tensor) // Outputs are allocated on first mention.
        tensor = &artifact->addTensor(arg.name, arg.role, arg.shape, arg.dtype);
      entry.args.push_back(argument(*tensor));
    }
    artifact->entries.emplace(name, std::move(entry));
  }
  return artifact;
}

std::string Artifact::contentDigest() const {
  // The compiler's record of how it was called (its command line, with the
  // -o directory; the calibration file's path) and of its own build says
  // where the artifact came from, not what it computes: the same model
  // compiled on each host into a directory of its own, by loomc builds that
  // generate the same code, is the same artifact. The rest of the manifest
  // and the library count byte for byte.
  std::string text = readFileText(man.source), problem;
  nlohmann::json manifest;
  if (!parseJson(text.data(), text.data() + text.size(), manifest, problem))
    throw Error(man.source + ": " + problem);
  for (const char *path :
       {"/compile_options/command_line", "/cost_model/calibration_file",
        "/generator_version"}) {
    nlohmann::json::json_pointer pointer(path);
    if (manifest.contains(pointer))
      manifest[pointer.parent_pointer()].erase(pointer.back());
  }
  std::string canonical = manifest.dump();
  std::string both = sha256Hex(canonical.data(), canonical.size()) +
                     sha256FileHex(libraryPath);
  return sha256Hex(both.data(), both.size());
}

Artifact::~Artifact() {
  if (device) {
    // Nothing may still run on buffers about to be reused, or in the
    // kernels the library's destructor unloads; a failure was reported by
    // whoever synchronized last.
    try {
      device->synchronize();
    } catch (const std::exception &) {
    }
  }
  if (handle)
    ::dlclose(handle);
  if (device) {
    for (auto &[name, tensor] : tensors)
      device->release(tensor->deviceBuffer);
    device->release(stepValue.deviceBuffer);
    releaseActiveDevice();
  }
}

void Artifact::attachDevice(Tensor &tensor) {
  tensor.deviceBuffer = device->allocate(tensor.byteSize());
}

void Artifact::synchronizeFor(const char *what) {
  try {
    device->synchronize();
  } catch (const Error &e) {
    fail("%s (%s): %s", what, dir.c_str(), e.what());
  }
}

void Artifact::upload(Tensor &tensor) {
  if (device)
    device->upload(tensor.deviceBuffer, tensor.data(), tensor.byteSize());
}

void Artifact::uploadInputs() {
  if (!device)
    return;
  for (Tensor *input : inputList)
    upload(*input);
  upload(stepValue);
}

void Artifact::uploadModel() {
  if (!device)
    return;
  for (auto *list : {&paramList, &stateList})
    for (Tensor *tensor : *list)
      upload(*tensor);
}

void Artifact::downloadOutputs(std::initializer_list<Tensor *> outputs) {
  if (!device)
    return;
  for (Tensor *tensor : outputs)
    if (tensor)
      device->download(tensor->data(), tensor->deviceBuffer,
                       tensor->byteSize());
  synchronizeFor("the GPU failed while running the artifact");
}

void Artifact::downloadModel() {
  if (!device)
    return;
  for (auto *list : {&paramList, &stateList})
    for (Tensor *tensor : *list)
      device->download(tensor->data(), tensor->deviceBuffer,
                       tensor->byteSize());
  synchronizeFor("the GPU failed while running the artifact");
}

void Artifact::download(Tensor &tensor) { downloadOutputs({&tensor}); }

void Artifact::synchronize() {
  if (device)
    synchronizeFor("the GPU failed while running the artifact");
}

uint64_t Artifact::peakDeviceBytes() const {
  return device ? device->peakBytesInUse() : 0;
}

void Entry::call() {
  if (!device) {
    fn(args.data());
    return;
  }
  DeviceCallScope scope(device);
  fn(args.data());
}

bool Artifact::hasEntry(const std::string &name) const {
  return entries.count(name) != 0;
}

Entry &Artifact::entry(const std::string &name) {
  auto it = entries.find(name);
  if (it == entries.end())
    fail("artifact %s has no '%s' entry (%s lists the entries it was "
         "compiled with)",
         dir.c_str(), name.c_str(), man.source.c_str());
  return it->second;
}

Tensor *Artifact::findTensor(const std::string &name) {
  auto it = tensors.find(name);
  return it == tensors.end() ? nullptr : it->second.get();
}

Tensor &Artifact::tensor(const std::string &name) {
  Tensor *found = findTensor(name);
  if (!found)
    fail("artifact %s has no tensor named '%s'", dir.c_str(), name.c_str());
  return *found;
}

const TensorSpec *shardedSpec(const Manifest &manifest, const Tensor &tensor) {
  const TensorSpec *spec = nullptr;
  if (tensor.role() == ArgRole::Param)
    spec = manifest.findParam(tensor.name());
  else if (tensor.role() == ArgRole::State)
    spec = manifest.findState(tensor.name());
  return spec && spec->sharded ? spec : nullptr;
}

/// A part of dimension `dim` of whole shape W: runs of (W[dim] / blocks /
/// parts) x inner elements, inner = the product of the dimensions after
/// `dim`; `blocks` runs for each index of the dimensions before it.
std::pair<int64_t, int64_t> SliceOf::runShape() const {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(wholeShape.size()); ++d) {
    if (d < split.dim)
      outer *= wholeShape[d];
    if (d > split.dim)
      inner *= wholeShape[d];
  }
  const int64_t rows = wholeShape[split.dim] / split.blocks / split.parts;
  return {outer * split.blocks, rows * inner};
}

int64_t SliceOf::runStart(int64_t k) const {
  int64_t inner = 1;
  for (size_t d = split.dim + 1; d < wholeShape.size(); ++d)
    inner *= wholeShape[d];
  const int64_t dimSize = wholeShape[split.dim];
  const int64_t blockRows = dimSize / split.blocks;
  const int64_t o = k / split.blocks, b = k % split.blocks;
  return (o * dimSize + b * blockRows + part * (blockRows / split.parts)) *
         inner;
}

int64_t SliceOf::available(int64_t count) const {
  int64_t elements = numElements(wholeShape);
  if (split.enabled())
    elements /= split.parts;
  return std::clamp<int64_t>(elements - first, 0, count);
}

SliceOf sliceOf(const Manifest &manifest, const Tensor &tensor, int rank) {
  const TensorSpec *spec = nullptr;
  if (tensor.role() == ArgRole::Param)
    spec = manifest.findParam(tensor.name());
  else if (tensor.role() == ArgRole::State)
    spec = manifest.findState(tensor.name());
  SliceOf slice{spec ? manifest.wholeShape(*spec) : tensor.shape(), 0};
  if (spec && spec->split.enabled()) {
    slice.split = spec->split;
    slice.part = manifest.mesh.coordinate(rank, spec->split.axis);
  }
  if (shardedSpec(manifest, tensor))
    slice.first = manifest.zeroRank(rank) * tensor.numElements();
  return slice;
}

void Artifact::selectPipelineStage(int rank) {
  const PipelineSpec &pipeline = man.pipeline;
  if (!pipeline.enabled() || stageSelected)
    return;
  stageSelected = true;
  allStages = std::make_unique<Manifest>(man);
  const int64_t stage = man.mesh.coordinate(rank, pipeline.axis);
  const std::string suffix = ".pp" + std::to_string(stage);
  std::map<std::string, Entry> mine;
  for (auto &[name, entry] : entries)
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      mine.emplace(name.substr(0, name.size() - suffix.size()),
                   std::move(entry));
  entries = std::move(mine);
  // The other stages' tensors are freed; specs and buffers stay aligned.
  auto keep = [&](std::vector<TensorSpec> &specs, std::vector<Tensor *> &list) {
    std::vector<TensorSpec> keptSpecs;
    std::vector<Tensor *> kept;
    for (size_t i = 0; i < specs.size(); ++i) {
      const std::vector<int64_t> &held = specs[i].pipelineStages;
      if (held.empty() ||
          std::find(held.begin(), held.end(), stage) != held.end()) {
        keptSpecs.push_back(std::move(specs[i]));
        kept.push_back(list[i]);
        continue;
      }
      if (device)
        device->release(list[i]->deviceBuffer);
      tensors.erase(list[i]->name());
    }
    specs = std::move(keptSpecs);
    list = std::move(kept);
  };
  keep(man.params, paramList);
  keep(man.state, stateList);
}

void Artifact::initialize(uint64_t seed, int rank) {
  selectPipelineStage(rank);
  auto fill = [&](Tensor &tensor, const TensorSpec &spec) {
    // A ZeRO slice holds the values its elements have in the whole tensor,
    // zeros past its end.
    const SliceOf slice = sliceOf(man, tensor, rank);
    const size_t size = dtypeSize(tensor.dtype());
    std::memset(tensor.data(), 0, tensor.byteSize());
    slice.forEachRun(tensor.numElements(), [&](int64_t whole, int64_t at,
                                               int64_t length) {
      fillInitSlice(static_cast<char *>(tensor.data()) + at * size,
                    tensor.dtype(), length, whole,
                    numElements(slice.wholeShape), spec.init, seed, spec.name);
    });
  };
  for (size_t i = 0; i < paramList.size(); ++i)
    fill(*paramList[i], man.params[i]);
  for (size_t i = 0; i < stateList.size(); ++i)
    fill(*stateList[i], man.state[i]);
  step() = 0;
  uploadModel();
}

} // namespace loom::rt
