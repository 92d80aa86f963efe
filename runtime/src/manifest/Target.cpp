//===- Target.cpp - Names of the targets ------------------------*- C++ -*-===//
//
// Apart from device/Devices.cpp so that the manifest parser links without
// the device layer (runtime/fuzz).
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Target.h"

namespace loom::rt {

const char *targetName(Target target) {
  switch (target) {
  case Target::CPU:
    return "cpu";
  case Target::CUDA:
    return "cuda";
  }
  return "?";
}

std::optional<Target> parseTargetName(const std::string &name) {
  if (name == "cpu")
    return Target::CPU;
  if (name == "cuda")
    return Target::CUDA;
  return std::nullopt;
}

} // namespace loom::rt
