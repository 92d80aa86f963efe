#===- cmake/LoomVersion.cmake - Loom's version, for --version ---------------===#
#
# Defines the interface target LoomVersion: its include directory holds
# loom/Version.h (LOOM_VERSION, LOOM_GIT_COMMIT, LOOM_VERSION_STRING), which
# cmake/WriteVersion.cmake rewrites at every build when the commit changes,
# so the tools never report the commit of an older build. Included by the
# top level and by the runtime (also when built on its own); the runtime's
# copy serves both.
#
#===------------------------------------------------------------------------===#
if(TARGET LoomVersion)
  return()
endif()
set(LOOM_VERSION 0.1.0)
get_filename_component(loom_version_root ${CMAKE_CURRENT_LIST_DIR} DIRECTORY)
set(loom_version_dir ${CMAKE_BINARY_DIR}/generated)
# No output file is named, so the target runs at every build; the script
# leaves an unchanged header alone, so nothing recompiles for it.
add_custom_target(LoomVersionHeader
  COMMAND ${CMAKE_COMMAND} -DLOOM_VERSION=${LOOM_VERSION}
          -DSOURCE_DIR=${loom_version_root}
          -DOUTPUT=${loom_version_dir}/loom/Version.h
          -P ${CMAKE_CURRENT_LIST_DIR}/WriteVersion.cmake
  BYPRODUCTS ${loom_version_dir}/loom/Version.h
  COMMENT "" VERBATIM)
add_library(LoomVersion INTERFACE)
target_include_directories(LoomVersion INTERFACE ${loom_version_dir})
add_dependencies(LoomVersion LoomVersionHeader)
