# loom_pass_decls(<Group>): passes/<Group>/Passes.h.inc from Passes.td, as
# `mlir-tblgen -gen-pass-decls -name <Group>` makes it, and the target
# Loom<Group>PassesIncGen.
#
# One change to what mlir-tblgen writes: each `Statistic<...>` of Passes.td
# becomes a loom::PassCounter (include/loom/Support/PassCounter.h) instead
# of a ::mlir::Pass::Statistic, which a release build of LLVM compiles to a
# no-op. The pass code is as upstream's (`++numFoo;`), and
# --mlir-pass-statistics reports the counts.
function(loom_pass_decls group)
  set(LLVM_TARGET_DEFINITIONS Passes.td)
  mlir_tablegen(Passes.upstream.h.inc -gen-pass-decls -name ${group})
  set(in "${CMAKE_CURRENT_BINARY_DIR}/Passes.upstream.h.inc")
  set(out "${CMAKE_CURRENT_BINARY_DIR}/Passes.h.inc")
  set(script "${PROJECT_SOURCE_DIR}/cmake/CountingStatistics.cmake")
  add_custom_command(OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DIN=${in} -DOUT=${out} -P ${script}
    DEPENDS "${in}" "${script}"
    COMMENT "Counting statistics in ${group}'s Passes.h.inc")
  set(TABLEGEN_OUTPUT ${TABLEGEN_OUTPUT} "${out}")
  add_public_tablegen_target(Loom${group}PassesIncGen)
endfunction()
