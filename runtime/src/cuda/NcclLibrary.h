//===- NcclLibrary.h - NCCL, found and loaded at run time -------*- C++ -*-===//
//
// Internal to libLoomCuda.so. NCCL is not linked: it is needed only by jobs
// that run collectives on GPUs, and it is installed in different places (the
// CUDA toolkit, a distribution package, or PyTorch's pip wheel
// nvidia-nccl-cu13). nccl.h is included for its types; the functions below
// are resolved with dlsym from the first library that loads, searching
//   1. $LOOM_NCCL_LIBRARY, when set (and then nothing else);
//   2. "libnccl.so.2" through the dynamic loader (LD_LIBRARY_PATH, the
//      plugin's RUNPATH, ld.so.cache);
//   3. libnccl.so.2 in the lib directory of the CUDA toolkit Loom was built
//      with;
//   4. the pip layout <site-packages>/nvidia/nccl/lib/libnccl.so.2 under the
//      usual Python prefixes ($VIRTUAL_ENV, $CONDA_PREFIX, ~/.local,
//      /usr/local, /usr, /opt/conda, pyenv versions);
//   5. that directory as `python3 -c "import nvidia.nccl"` reports it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_NCCLLIBRARY_H
#define LOOM_RUNTIME_SRC_CUDA_NCCLLIBRARY_H

#include <nccl.h>

#include <string>
#include <vector>

namespace loom::rt::cuda {

#define LOOM_NCCL_FUNCTIONS(X)                                                 \
  X(ncclGetVersion)                                                            \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRankConfig)                                                    \
  X(ncclCommFinalize)                                                          \
  X(ncclCommDestroy)                                                           \
  X(ncclCommAbort)                                                             \
  X(ncclCommGetAsyncError)                                                     \
  X(ncclGetErrorString)                                                        \
  X(ncclGetLastError)                                                          \
  X(ncclAllReduce)                                                             \
  X(ncclReduceScatter)                                                         \
  X(ncclAllGather)                                                             \
  X(ncclBroadcast)

/// The oldest NCCL the plugin uses: ncclAvg (2.10), ncclGetLastError (2.13),
/// nonblocking communicators and ncclCommFinalize (2.14, NcclComm.h).
constexpr int kMinNcclVersion = 21400;

struct NcclLibrary {
#define LOOM_NCCL_DECLARE(name) decltype(&::name) name = nullptr;
  LOOM_NCCL_FUNCTIONS(LOOM_NCCL_DECLARE)
#undef LOOM_NCCL_DECLARE
  /// Where it was loaded from, and ncclGetVersion's code (e.g. 22805).
  std::string path;
  int version = 0;

  /// "ncclAllReduce failed: unhandled system error (<NCCL's last error>)".
  std::string errorText(ncclResult_t result, const char *call) const;
  /// Throws Error(errorText(...)) unless `result` is ncclSuccess.
  void check(ncclResult_t result, const char *call) const;
};

/// The search order above, as paths or names for dlopen (an expansion of
/// the patterns that exist on this machine; the python3 query is not run).
std::vector<std::string> ncclCandidates();

/// Loads the first candidate that dlopen accepts and has every function;
/// throws Error listing each attempt and how to point Loom at NCCL.
/// `candidates` empty: ncclCandidates() plus the python3 query.
NcclLibrary openNccl(const std::vector<std::string> &candidates = {});

/// openNccl's search: `candidates` in order, then (`askPython`) once the
/// library python3 finds.
NcclLibrary searchNccl(std::vector<std::string> candidates, bool askPython);

/// <the nvidia.nccl package python3 imports>/lib/libnccl.so.2 if that file
/// exists, else "".
std::string pythonNcclPath();

/// openNccl() once per process (a failure is retried next time).
const NcclLibrary &loadNccl();

/// "2.28.3" from 22803.
std::string ncclVersionText(int version);

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_NCCLLIBRARY_H
