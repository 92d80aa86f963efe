//===- PortabilityTest.cpp - What the runtime needs to start ----*- C++ -*-===//
//
// libLoomRuntime.so and loom-run must start on machines without MPI or any
// NVIDIA software: those live in plugins loaded on demand
// (src/support/Plugin.h). These tests read the DT_NEEDED entries of the built
// ELF files, as `readelf -d` shows them, and check the plugins' entries too,
// which proves that the reader sees a dependency when there is one.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "loom/runtime/Target.h"

#include <dlfcn.h>
#include <elf.h>

#include <cstring>
#include <fstream>

using namespace loom::rt;
using namespace loom::rt::test;

namespace {

/// The DT_NEEDED names of a 64-bit little-endian ELF file, from its dynamic
/// section and the string table that section links to.
std::vector<std::string> neededLibraries(const std::string &path) {
  std::vector<char> bytes = readBytes(path);
  auto at = [&](size_t offset, size_t size) -> const char * {
    if (offset > bytes.size() || size > bytes.size() - offset)
      throw std::runtime_error(path + ": truncated ELF file");
    return bytes.data() + offset;
  };
  Elf64_Ehdr header;
  std::memcpy(&header, at(0, sizeof(header)), sizeof(header));
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB)
    throw std::runtime_error(path + ": not a 64-bit little-endian ELF file");
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i)
    std::memcpy(&sections[i],
                at(header.e_shoff + i * header.e_shentsize, sizeof(Elf64_Shdr)),
                sizeof(Elf64_Shdr));
  std::vector<std::string> needed;
  for (const Elf64_Shdr &section : sections) {
    if (section.sh_type != SHT_DYNAMIC)
      continue;
    const Elf64_Shdr &strings = sections.at(section.sh_link);
    for (size_t offset = 0; offset + sizeof(Elf64_Dyn) <= section.sh_size;
         offset += sizeof(Elf64_Dyn)) {
      Elf64_Dyn entry;
      std::memcpy(&entry, at(section.sh_offset + offset, sizeof(entry)),
                  sizeof(entry));
      if (entry.d_tag == DT_NULL)
        break;
      if (entry.d_tag == DT_NEEDED)
        needed.push_back(at(strings.sh_offset + entry.d_un.d_val, 1));
    }
  }
  return needed;
}

std::string runtimeLibrary() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&requireTarget), &info) ||
      !info.dli_fname)
    return "";
  return info.dli_fname;
}

std::string besideRuntime(const std::string &name) {
  std::string path = runtimeLibrary();
  return path.substr(0, path.rfind('/') + 1) + name;
}

bool exists(const std::string &path) { return std::ifstream(path).good(); }

/// Libraries that only plugins may need.
const char *const kPluginOnly[] = {"libcuda.",    "libcudart",   "libcublas",
                                   "libnccl",     "libnvidia",   "libmpi",
                                   "libopen-pal", "libopen-rte", "libpmix"};

::testing::AssertionResult needsNoPluginLibrary(const std::string &path) {
  std::vector<std::string> needed = neededLibraries(path);
  std::string all;
  for (const std::string &name : needed)
    all += " " + name;
  bool hasLibc = false;
  for (const std::string &name : needed) {
    hasLibc |= name == "libc.so.6";
    for (const char *forbidden : kPluginOnly)
      if (name.find(forbidden) != std::string::npos)
        return ::testing::AssertionFailure()
               << path << " needs " << name << " (NEEDED:" << all << ")";
  }
  if (!hasLibc) // the reader would be broken
    return ::testing::AssertionFailure()
           << path << ": no libc.so.6 among NEEDED:" << all;
  return ::testing::AssertionSuccess() << path << " NEEDED:" << all;
}

bool needs(const std::string &path, const char *library) {
  for (const std::string &name : neededLibraries(path))
    if (name.find(library) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST(Portability, RuntimeLibraryNeedsNoMpiOrCuda) {
  std::string path = runtimeLibrary();
  ASSERT_NE(path.find("libLoomRuntime.so"), std::string::npos) << path;
  EXPECT_TRUE(needsNoPluginLibrary(path));
}

TEST(Portability, LoomRunNeedsNoMpiOrCuda) {
#ifdef LOOM_TEST_LOOM_RUN
  ASSERT_TRUE(exists(LOOM_TEST_LOOM_RUN)) << LOOM_TEST_LOOM_RUN;
  EXPECT_TRUE(needsNoPluginLibrary(LOOM_TEST_LOOM_RUN));
#else
  GTEST_SKIP() << "loom-run is not part of this build";
#endif
}

TEST(Portability, PluginsCarryTheDependencies) {
  std::string mpi = besideRuntime("libLoomMpi.so");
  std::string cuda = besideRuntime("libLoomCuda.so");
#ifdef LOOM_TEST_HAVE_MPI_PLUGIN
  ASSERT_TRUE(exists(mpi)) << mpi;
  EXPECT_TRUE(needs(mpi, "libmpi")) << mpi;
  EXPECT_TRUE(needs(mpi, "libLoomRuntime.so")) << mpi;
#endif
#ifdef LOOM_TEST_HAVE_CUDA_PLUGIN
  ASSERT_TRUE(exists(cuda)) << cuda;
  EXPECT_TRUE(needs(cuda, "libcublas")) << cuda;
  // The driver and NCCL are loaded at run time, never linked.
  EXPECT_FALSE(needs(cuda, "libcuda.")) << cuda;
  EXPECT_FALSE(needs(cuda, "libnccl")) << cuda;
  EXPECT_FALSE(needs(cuda, "libcudart")) << cuda;
#endif
  if (!exists(mpi) && !exists(cuda))
    GTEST_SKIP() << "built without MPI and CUDA";
}
