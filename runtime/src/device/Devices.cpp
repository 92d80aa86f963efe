//===- Devices.cpp - Opening the GPU of a process ---------------*- C++ -*-===//
//
// Loads libLoomCuda.so (support/Plugin.h) and asks it to open this rank's GPU,
// once per process; a failure is not remembered, so a later attempt (say,
// after a test changed LOOM_CUDA_DRIVER) tries again. Also counts the cuda
// artifacts in use and marks the threads running their entry points, which
// decide whether the loom_rt_* collectives take device or host buffers
// (artifact/Collectives.cpp).
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Target.h"
#include "loom/runtime/World.h"
#include "support/Plugin.h"

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace loom::rt {

Device::~Device() = default;

namespace {

constexpr const char *kCudaPlugin = "libLoomCuda.so";
constexpr const char *kCudaPluginEnv = "LOOM_CUDA_PLUGIN";

std::mutex openMutex;
Device *opened = nullptr;

std::atomic<Device *> active{nullptr};
std::atomic<int> activeUsers{0};

thread_local Device *calling = nullptr;

} // namespace

Device &openCudaDevice() {
  std::lock_guard<std::mutex> lock(openMutex);
  if (opened)
    return *opened;
#ifndef LOOM_HAVE_CUDA_PLUGIN
  if (!std::getenv(kCudaPluginEnv))
    fail("this runtime was built without CUDA (no CUDA toolkit was found "
         "when it was configured), so it has no libLoomCuda.so and cannot "
         "run CUDA artifacts");
#endif
  std::string error;
  void *plugin = loadPlugin(kCudaPlugin, kCudaPluginEnv, error);
  if (!plugin)
    fail("cannot load the CUDA plugin: %s", error.c_str());
  auto open =
      reinterpret_cast<OpenDeviceFn>(::dlsym(plugin, kOpenCudaDeviceSymbol));
  if (!open)
    fail("%s does not export %s (not a Loom CUDA plugin)", kCudaPlugin,
         kOpenCudaDeviceSymbol);
  JobInfo job = detectJob();
  DeviceOptions options;
  options.localRank = job.localRank;
  options.localSize = job.localSize;
  opened = open(kPluginAbiVersion, &options);
  return *opened;
}

void requireTarget(Target target) {
  if (target == Target::CUDA)
    openCudaDevice();
}

std::string describeTarget(Target target) {
  if (target == Target::CUDA)
    return openCudaDevice().describe();
  return "cpu";
}

Device *activeDevice() { return active.load(); }

void retainActiveDevice(Device &device) {
  ++activeUsers;
  active.store(&device);
}

void releaseActiveDevice() {
  if (--activeUsers == 0)
    active.store(nullptr);
}

Device *deviceOfCall() { return calling; }

DeviceCallScope::DeviceCallScope(Device *device) : previous(calling) {
  calling = device;
}

DeviceCallScope::~DeviceCallScope() { calling = previous; }

} // namespace loom::rt
