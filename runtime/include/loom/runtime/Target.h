//===- Target.h - What an artifact's code runs on ---------------*- C++ -*-===//
//
// An artifact is compiled for one target (manifest "target", loomc
// --target): the host CPU, or an NVIDIA GPU through CUDA. A cuda artifact's
// entry points take device pointers and launch kernels, so the runtime must
// open a GPU before it loads the artifact. All CUDA code lives in a plugin,
// libLoomCuda.so, that the runtime loads only then (docs/gpu.md): loom-run
// and libLoomRuntime.so start on machines without any NVIDIA software.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_TARGET_H
#define LOOM_RUNTIME_TARGET_H

#include <optional>
#include <string>

namespace loom::rt {

enum class Target { CPU, CUDA };

/// "cpu" or "cuda", as in the manifest and in loomc/loom-run flags.
const char *targetName(Target target);
std::optional<Target> parseTargetName(const std::string &name);

/// Makes sure this process can run code compiled for `target`: nothing to do
/// for cpu; for cuda, loads libLoomCuda.so and opens this rank's GPU (once
/// per process). Throws Error saying why not, e.g. "no NVIDIA driver
/// (libcuda.so.1: cannot open shared object file: ...); this machine cannot
/// run CUDA artifacts".
void requireTarget(Target target);

/// One line about where `target` code runs, e.g. "cpu" or "NVIDIA H100 80GB
/// HBM3 (sm_90), device 0 of 8". Opens the device like requireTarget.
std::string describeTarget(Target target);

} // namespace loom::rt

#endif // LOOM_RUNTIME_TARGET_H
