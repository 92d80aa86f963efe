//===- ManifestFuzz.cpp - Fuzz target: the manifest.json reader -*- C++ -*-===//
//
// Parses the input as an artifact's manifest.json, then does the arithmetic
// the loader and trainer do with an accepted manifest without checking it
// again: buffer sizes of every tensor and entry argument, tokens per step,
// the mesh's rank count, CO2's round buffer, ZeRO's gather buffers (UBSan
// sees any overflow), and the cross references the parser promises to have
// checked.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"
#include "loom/runtime/Manifest.h"

#include <cstdint>
#include <string>

using namespace loom::rt;
using loom::fuzz::violated;

namespace {

constexpr const char *kSource = "fuzz/manifest.json";

void use(const Manifest &manifest) {
  size_t bytes = 0;
  for (const auto *list : {&manifest.params, &manifest.state, &manifest.inputs})
    for (const TensorSpec &spec : *list)
      bytes += spec.byteSize() + shapeToString(spec.shape).size();
  for (const TensorSpec &state : manifest.state)
    if (!state.param.empty() && !manifest.findParam(state.param))
      violated("state '" + state.name + "' names an undeclared param");
  // A save all-gathers the slices of every rank of a sharded tensor into a
  // padded buffer and copies the whole tensor's elements out of it
  // (ZeroShards.cpp); initialisation and loads fill the slice from element
  // rank x slice of the whole tensor on.
  for (const auto *list : {&manifest.params, &manifest.state})
    for (const TensorSpec &spec : *list) {
      if (!spec.sharded)
        continue;
      const bool isState = list == &manifest.state;
      if (!manifest.zero.enabled() ||
          (isState && !manifest.findParam(spec.param)) ||
          spec.numElements() * manifest.zero.ranks <
              numElements(manifest.wholeShape(spec)))
        violated("sharded tensor '" + spec.name +
                 "' is not a slice of its whole tensor");
      bytes += static_cast<size_t>(spec.byteSize() * manifest.zero.ranks) +
               shapeToString(manifest.wholeShape(spec)).size();
    }
  for (const auto &[name, entry] : manifest.entries) {
    if (manifest.findEntry(name) != &entry)
      violated("findEntry('" + name + "')");
    for (const EntryArg &arg : entry.args) {
      bytes +=
          static_cast<size_t>(numElements(arg.shape)) * dtypeSize(arg.dtype);
      const TensorSpec *declared = nullptr;
      switch (arg.role) {
      case ArgRole::Param:
        declared = manifest.findParam(arg.name);
        break;
      case ArgRole::State:
        declared = manifest.findState(arg.name);
        break;
      case ArgRole::Input:
        declared = manifest.findInput(arg.name);
        break;
      case ArgRole::Output:
        if (!entry.findOutput(arg.name))
          violated("findOutput('" + arg.name + "')");
        continue;
      case ArgRole::Step:
        continue;
      }
      if (!declared || declared->shape != arg.shape ||
          declared->dtype != arg.dtype)
        violated("argument '" + arg.name + "' of entry '" + name +
                 "' is not as declared");
    }
  }
  bytes += static_cast<size_t>(manifest.task.tokensPerStep());
  bytes += static_cast<size_t>(manifest.mesh.ranks()) +
           manifest.mesh.describe().size();
  // CO2's round buffer (CO2Rounds.cpp), on as many ranks as the mesh has.
  bytes +=
      static_cast<size_t>(manifest.co2.shardElements * manifest.mesh.ranks());
  volatile size_t sink = bytes;
  (void)sink;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    Manifest manifest = parseManifest(
        std::string(reinterpret_cast<const char *>(data), size), kSource);
    use(manifest);
  } catch (const Error &error) {
    loom::fuzz::checkNamesSource(error, kSource);
  }
  return 0;
}
