#===- cmake/LoomUnityBuild.cmake - Batched compiles of header-heavy libraries ===#
#
# loom_unity_build(TARGET BATCH) compiles TARGET's sources BATCH at a time,
# each batch as one file (CMake's UNITY_BUILD). The compiler libraries'
# files are small and each spends most of its compile parsing the same MLIR
# dialect headers. The lowering passes took 12 minutes of CPU one file at a
# time, 2.5 minutes in batches of 7, while one Passes.h gave all 27 files
# nine dialects; split by stage into passes/{ToLinalg,Bufferize,CPU,GPU},
# with each file including only the dialects it uses, they take 4.4 minutes
# one at a time (3 to 15 s a file) and are no longer batched, so that an
# edit recompiles one file. Included by the top level and by the runtime
# (also when built on its own).
#
# -DLOOM_UNITY_BUILD=OFF compiles one file at a time again: when a file may
# be missing an include that a batch-mate provides, or for the quickest
# rebuild after editing one file.
#
#===------------------------------------------------------------------------===#
include_guard(GLOBAL)
option(LOOM_UNITY_BUILD "Compile the header-heavy libraries in batches" ON)

function(loom_unity_build target batch)
  if(LOOM_UNITY_BUILD)
    # Each file defines its own DEBUG_TYPE (LLVM_DEBUG's tag). g++ takes the
    # files of a batch for headers, and warns about anonymous-namespace types
    # in them (-Wsubobject-linkage: gtest fixtures) as it would in a header.
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                          UNITY_BUILD_BATCH_SIZE ${batch}
                          UNITY_BUILD_CODE_BEFORE_INCLUDE "#undef DEBUG_TYPE")
    target_compile_options(${target} PRIVATE
                           $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
  endif()
endfunction()
