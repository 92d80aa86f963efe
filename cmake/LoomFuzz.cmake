#===- cmake/LoomFuzz.cmake - What every fuzz target is built with -----------===#
#
# Included by runtime/fuzz (the file readers) and tools/loom-fuzz-compile (the
# compiler). Sets
#   LOOM_FUZZ_SANITIZERS  the sanitizers a fuzz target is built with (compile
#                         and link);
#   LOOM_HAVE_LIBFUZZER   whether the C++ compiler has libFuzzer (clang): the
#                         targets are then coverage-guided libFuzzer binaries,
#                         otherwise runtime/fuzz/FuzzMain.cpp drives them.
#
#===------------------------------------------------------------------------===#
include(CheckCXXSourceCompiles)

set(LOOM_FUZZ_SANITIZERS -fsanitize=address,undefined)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # g++ leaves it out of -fsanitize=undefined, and JSON numbers are doubles.
  list(APPEND LOOM_FUZZ_SANITIZERS -fsanitize=float-cast-overflow)
endif()

if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
  check_cxx_source_compiles([[
    #include <cstddef>
    #include <cstdint>
    extern "C" int LLVMFuzzerTestOneInput(const uint8_t *, size_t) {
      return 0;
    }]] LOOM_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
else()
  set(LOOM_HAVE_LIBFUZZER OFF)
endif()
