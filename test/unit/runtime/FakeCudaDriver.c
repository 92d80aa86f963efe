/*===- FakeCudaDriver.c - A CUDA driver that finds no GPU -----------------===*
 *
 * Loaded by the CUDA plugin instead of libcuda.so.1 (LOOM_CUDA_DRIVER) in
 * the tests of what a machine with an NVIDIA driver but no usable GPU
 * reports. It has what the plugin looks up: cuDriverGetVersion (the CUDA
 * version in $LOOM_FAKE_CUDA_VERSION, default 13000) and cuGetProcAddress_v2,
 * which hands out functions whose cuInit fails with CUDA_ERROR_NO_DEVICE
 * and everything else with CUDA_ERROR_NOT_SUPPORTED (and, as the real one,
 * refuses a version newer than the driver's).
 *
 *===----------------------------------------------------------------------===*/

#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kNoDevice = 100,
  kNotSupported = 801,
};

__attribute__((visibility("default"))) CUresult cuDriverGetVersion(int *v) {
  const char *text = getenv("LOOM_FAKE_CUDA_VERSION");
  *v = text && *text ? atoi(text) : 13000;
  return kSuccess;
}

static CUresult fakeInit(unsigned flags) {
  (void)flags;
  return kNoDevice;
}

static CUresult fakeGetErrorName(CUresult error, const char **name) {
  *name =
      error == kNoDevice ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_NOT_SUPPORTED";
  return kSuccess;
}

static CUresult fakeGetErrorString(CUresult error, const char **text) {
  *text = error == kNoDevice ? "no CUDA-capable device is detected"
                             : "operation not supported";
  return kSuccess;
}

static CUresult unsupported(void) { return kNotSupported; }

__attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                    unsigned long long flags, int *status) {
  (void)flags;
  /* As the real driver: no version newer than its own. */
  int version = 0;
  cuDriverGetVersion(&version);
  if (cudaVersion > version)
    return kInvalidValue;
  if (strcmp(symbol, "cuInit") == 0)
    *pfn = (void *)fakeInit;
  else if (strcmp(symbol, "cuGetErrorName") == 0)
    *pfn = (void *)fakeGetErrorName;
  else if (strcmp(symbol, "cuGetErrorString") == 0)
    *pfn = (void *)fakeGetErrorString;
  else
    *pfn = (void *)unsupported;
  if (status)
    *status = 0; /* CU_GET_PROC_ADDRESS_SUCCESS */
  return kSuccess;
}
