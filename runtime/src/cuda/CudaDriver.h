//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// Internal to libLoomCuda.so. The plugin never links libcuda: a machine
// without an NVIDIA driver must be able to load it and hear why it cannot
// run CUDA artifacts. cuda.h is included for its types only; every driver
// function the plugin calls is resolved from libcuda.so.1 at run time,
// through cuGetProcAddress with the CUDA version of the headers, so each
// pointer has exactly the ABI (the _v2/_v3 variant) its declaration here
// describes. The plugin links with --no-undefined, so a direct call to a
// driver function would fail the build.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_CUDADRIVER_H
#define LOOM_RUNTIME_SRC_CUDA_CUDADRIVER_H

#include <cuda.h>

#include <string>

namespace loom::rt::cuda {

// Every driver function the plugin uses. The names are cuda.h's; several are
// macros for versioned symbols (cuMemAlloc is cuMemAlloc_v2), which is why
// the table's members are declared with decltype of the expanded name while
// the lookup passes the unexpanded one (#name) to cuGetProcAddress.
#define LOOM_CUDA_DRIVER_FUNCTIONS(X)                                          \
  X(cuInit)                                                                    \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceGetUuid)                                                           \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamQuery)                                                             \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventQuery)                                                              \
  X(cuEventElapsedTime)                                                        \
  X(cuMemAlloc)                                                                \
  X(cuMemAllocManaged)                                                         \
  X(cuMemFree)                                                                 \
  X(cuMemGetInfo)                                                              \
  X(cuMemcpyAsync)                                                             \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD16Async)                                                          \
  X(cuMemsetD32Async)                                                          \
  X(cuPointerGetAttribute)                                                     \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuLaunchKernelEx)                                                          \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)

struct Driver {
#define LOOM_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
  LOOM_CUDA_DRIVER_FUNCTIONS(LOOM_CUDA_DECLARE)
#undef LOOM_CUDA_DECLARE
  /// The driver's CUDA version, e.g. 13000.
  int version = 0;
};

/// Loads the driver library ($LOOM_CUDA_DRIVER, else libcuda.so.1) and
/// resolves the table. Throws Error: "no NVIDIA driver (<dlerror>); this
/// machine cannot run CUDA artifacts", or that the driver is older than the
/// CUDA the plugin was built with. Each call loads afresh (a process keeps
/// the table of the device it opens).
Driver loadDriver();

/// "an illegal memory access was encountered (CUDA_ERROR_ILLEGAL_ADDRESS)";
/// uses `driver` when it can, else only the number.
std::string errorText(const Driver *driver, CUresult result);

/// Throws Error("<call> failed: <errorText>") unless `result` is success.
void check(const Driver &driver, CUresult result, const char *call);

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_CUDADRIVER_H
