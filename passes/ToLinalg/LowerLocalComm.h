//===- LowerLocalComm.h - The comm ops that are local in the step -*- C++
//-*-===//
//
// Some comm ops matter to autodiff only, for the gradient they give their
// operand: in the step they are their operand (comm.fan_out), a slice at
// the rank's position (comm.shard) or a plain all-gather (comm.unshard).
// --loom-lower-to-linalg rewrites them with the loom ops.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_TOLINALG_LOWERLOCALCOMM_H
#define LOOM_PASSES_TOLINALG_LOWERLOCALCOMM_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::loom {

/// The patterns that lower comm.fan_out, comm.shard and comm.unshard.
void populateLocalCommLoweringPatterns(RewritePatternSet &patterns);

} // namespace mlir::loom

#endif // LOOM_PASSES_TOLINALG_LOWERLOCALCOMM_H
