//===- NcclLibrary.cpp - NCCL, found and loaded at run time -----*- C++ -*-===//
//
// The search of NcclLibrary.h. Handles of libraries that fail a check are
// closed again; the one that is used stays loaded for the process.
//
//===----------------------------------------------------------------------===//

#include "NcclLibrary.h"
#include "loom/runtime/Error.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <glob.h>
#include <mutex>
#include <unistd.h>

#ifndef LOOM_CUDA_TOOLKIT_LIB_DIR
#define LOOM_CUDA_TOOLKIT_LIB_DIR ""
#endif

namespace loom::rt::cuda {

namespace {

constexpr const char *kLibrary = "libnccl.so.2";
constexpr const char *kPipSuffix = "nvidia/nccl/lib/libnccl.so.2";

/// Paths matching a glob pattern, sorted (newest Python last).
std::vector<std::string> globPaths(const std::string &pattern) {
  std::vector<std::string> paths;
  glob_t matches;
  if (::glob(pattern.c_str(), 0, nullptr, &matches) == 0)
    for (size_t i = 0; i < matches.gl_pathc; ++i)
      paths.push_back(matches.gl_pathv[i]);
  ::globfree(&matches);
  return paths;
}

/// The pip layout under every usual Python prefix.
std::vector<std::string> pipCandidates() {
  std::vector<std::string> prefixes;
  for (const char *var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char *value = std::getenv(var); value && *value)
      prefixes.push_back(value);
  if (const char *home = std::getenv("HOME"); home && *home) {
    prefixes.push_back(std::string(home) + "/.local");
    prefixes.push_back(std::string(home) + "/.pyenv/versions/*");
  }
  for (const char *prefix : {"/usr/local", "/usr", "/opt/conda"})
    prefixes.push_back(prefix);
  std::vector<std::string> paths;
  for (const std::string &prefix : prefixes)
    for (const char *lib : {"lib", "lib64"})
      for (const char *packages : {"site-packages", "dist-packages"})
        for (const std::string &path :
             globPaths(prefix + "/" + lib + "/python3*/" + packages + "/" +
                       kPipSuffix))
          paths.push_back(path);
  return paths;
}

} // namespace

/// The last resort: a Python in an unusual prefix.
std::string pythonNcclPath() {
  // The wheel ships no nvidia/nccl/__init__.py: nvidia.nccl is a namespace
  // package, whose __file__ is None; its __path__ lists the directory.
  std::FILE *pipe = ::popen("python3 -c \"import nvidia.nccl; "
                            "print(list(nvidia.nccl.__path__)[0])\" "
                            "2>/dev/null",
                            "r");
  if (!pipe)
    return "";
  char line[4096] = {0};
  std::string dir;
  if (std::fgets(line, sizeof(line), pipe))
    dir = line;
  ::pclose(pipe);
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r'))
    dir.pop_back();
  if (dir.empty())
    return "";
  std::string path = dir + "/lib/" + kLibrary;
  return ::access(path.c_str(), R_OK) == 0 ? path : "";
}

namespace {

/// Loads `candidate` completely, or says in `error` why not.
bool tryLoad(const std::string &candidate, NcclLibrary &library,
             std::string &error) {
  void *handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    error = why ? why : candidate + ": cannot be loaded";
    return false;
  }
  NcclLibrary loaded;
  const char *missing = nullptr;
#define LOOM_NCCL_RESOLVE(name)                                                \
  if (!missing && !(loaded.name = reinterpret_cast<decltype(loaded.name)>(     \
                        ::dlsym(handle, #name))))                              \
    missing = #name;
  LOOM_NCCL_FUNCTIONS(LOOM_NCCL_RESOLVE)
#undef LOOM_NCCL_RESOLVE
  if (missing) {
    error = candidate + ": has no " + missing;
    ::dlclose(handle);
    return false;
  }
  if (loaded.ncclGetVersion(&loaded.version) != ncclSuccess ||
      loaded.version < kMinNcclVersion) {
    error = candidate + ": NCCL " + ncclVersionText(loaded.version) +
            " is older than " + ncclVersionText(kMinNcclVersion);
    ::dlclose(handle);
    return false;
  }
  Dl_info info;
  loaded.path =
      ::dladdr(reinterpret_cast<void *>(loaded.ncclGetVersion), &info) &&
              info.dli_fname
          ? info.dli_fname
          : candidate;
  library = loaded;
  return true;
}

} // namespace

std::string ncclVersionText(int version) {
  int major = version >= 10000 ? version / 10000 : version / 1000;
  int minor = version >= 10000 ? version / 100 % 100 : version / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(version % 100);
}

std::string NcclLibrary::errorText(ncclResult_t result,
                                   const char *call) const {
  std::string text =
      std::string(call) + " failed: " +
      (ncclGetErrorString ? ncclGetErrorString(result) : "NCCL error");
  const char *last = ncclGetLastError ? ncclGetLastError(nullptr) : nullptr;
  if (last && *last)
    text += std::string(" (") + last + ")";
  return text;
}

void NcclLibrary::check(ncclResult_t result, const char *call) const {
  if (result != ncclSuccess)
    throw Error(errorText(result, call));
}

std::vector<std::string> ncclCandidates() {
  if (const char *path = std::getenv("LOOM_NCCL_LIBRARY"); path && *path)
    return {path};
  std::vector<std::string> candidates = {kLibrary};
  std::string toolkit = LOOM_CUDA_TOOLKIT_LIB_DIR;
  if (!toolkit.empty())
    candidates.push_back(toolkit + "/" + kLibrary);
  for (const std::string &path : pipCandidates())
    candidates.push_back(path);
  return candidates;
}

NcclLibrary openNccl(const std::vector<std::string> &given) {
  if (!given.empty())
    return searchNccl(given, /*askPython=*/false);
  const char *env = std::getenv("LOOM_NCCL_LIBRARY");
  return searchNccl(ncclCandidates(), /*askPython=*/!(env && *env));
}

NcclLibrary searchNccl(std::vector<std::string> candidates, bool askPython) {
  std::string attempts;
  NcclLibrary library;
  for (size_t i = 0; i <= candidates.size(); ++i) {
    if (i == candidates.size()) {
      // The Python query spawns a process: only after everything else, and
      // once (a library it finds that fails to load ends the search).
      std::string python = askPython ? pythonNcclPath() : "";
      askPython = false;
      if (python.empty())
        break;
      candidates.push_back(python);
    }
    std::string error;
    if (tryLoad(candidates[i], library, error))
      return library;
    attempts += "\n  " + error;
  }
  fail("cannot load NCCL, which GPU collectives need; tried:%s\n(install "
       "NCCL, e.g. `pip install nvidia-nccl-cu13` or the libnccl2 package, or "
       "set LOOM_NCCL_LIBRARY to the path of libnccl.so.2)",
       attempts.c_str());
}

const NcclLibrary &loadNccl() {
  static std::mutex mutex;
  static NcclLibrary *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded)
    loaded = new NcclLibrary(openNccl());
  return *loaded;
}

} // namespace loom::rt::cuda
