# cmake -DIN=<mlir-tblgen output> -DOUT=<file> -P CountingStatistics.cmake
# Writes IN to OUT with the passes' statistics as loom::PassCounter (see
# LoomPassDecls.cmake); fails if IN declares statistics some other way.
file(READ "${IN}" text)
string(REPLACE "::mlir::Pass::Statistic " "::mlir::loom::PassCounter " text
       "${text}")
string(FIND "${text}" "Pass::Statistic" left)
if(NOT left EQUAL -1)
  message(FATAL_ERROR "${IN}: a statistic not declared as "
                      "'::mlir::Pass::Statistic <name>{...}': mlir-tblgen's "
                      "output changed; update ${CMAKE_CURRENT_LIST_FILE}")
endif()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
