//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -*- C++ -*-===//
//
// dlopen("libcuda.so.1"), then cuGetProcAddress for every function of the
// table. The library handle is never closed: the driver cannot be unloaded
// safely once initialised.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"
#include "loom/runtime/Error.h"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>

namespace loom::rt::cuda {

namespace {

/// How cuGetProcAddress is declared in CUDA 12+ (symbol cuGetProcAddress_v2).
using GetProcAddressFn = CUresult (*)(const char *, void **, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult *);

std::string versionText(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

} // namespace

Driver loadDriver() {
  const char *path = "libcuda.so.1";
  if (const char *override = std::getenv("LOOM_CUDA_DRIVER");
      override && *override)
    path = override;
  void *library = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = ::dlerror();
    fail("no NVIDIA driver (%s); this machine cannot run CUDA artifacts",
         why ? why : path);
  }
  Driver driver;
  auto getVersion = reinterpret_cast<CUresult (*)(int *)>(
      ::dlsym(library, "cuDriverGetVersion"));
  auto getProc = reinterpret_cast<GetProcAddressFn>(
      ::dlsym(library, "cuGetProcAddress_v2"));
  if (!getVersion || getVersion(&driver.version) != CUDA_SUCCESS || !getProc)
    fail("%s is not a usable NVIDIA driver (it lacks cuDriverGetVersion or "
         "cuGetProcAddress_v2, which every driver since CUDA 12.0 has); "
         "install a driver for CUDA %s or newer",
         path, versionText(CUDA_VERSION).c_str());
  // cuBLAS and the kernels' PTX are those of the toolkit the plugin was
  // built with, which needs a driver of the same major version or newer.
  if (driver.version / 1000 < CUDA_VERSION / 1000)
    fail("the NVIDIA driver supports CUDA %s but this runtime was built with "
         "CUDA %s; update the driver (or rebuild Loom with an older CUDA "
         "toolkit)",
         versionText(driver.version).c_str(),
         versionText(CUDA_VERSION).c_str());
  // cuGetProcAddress refuses (CUDA_ERROR_INVALID_VALUE) a version newer
  // than the driver's, so a plugin built with CUDA 13.1 on a 13.0 driver
  // asks for the 13.0 variants: the table's newest (cuEventElapsedTime_v2)
  // is from 12.8, so those are the ABI the header declares.
  const int wanted = std::min<int>(CUDA_VERSION, driver.version);
  auto resolve = [&](const char *name, void **slot) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult result =
        getProc(name, slot, wanted, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (result != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS ||
        !*slot)
      fail("the NVIDIA driver (CUDA %s) does not provide %s for CUDA %s; "
           "update the driver",
           versionText(driver.version).c_str(), name,
           versionText(wanted).c_str());
  };
#define LOOM_CUDA_RESOLVE(name)                                                \
  resolve(#name, reinterpret_cast<void **>(&driver.name));
  LOOM_CUDA_DRIVER_FUNCTIONS(LOOM_CUDA_RESOLVE)
#undef LOOM_CUDA_RESOLVE
  return driver;
}

std::string errorText(const Driver *driver, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (driver && driver->cuGetErrorName && driver->cuGetErrorString) {
    driver->cuGetErrorName(result, &name);
    driver->cuGetErrorString(result, &text);
  }
  if (!name)
    return "CUDA error " + std::to_string(static_cast<int>(result));
  return std::string(text ? text : "unknown error") + " (" + name + ")";
}

void check(const Driver &driver, CUresult result, const char *call) {
  if (result != CUDA_SUCCESS)
    fail("%s failed: %s", call, errorText(&driver, result).c_str());
}

} // namespace loom::rt::cuda
