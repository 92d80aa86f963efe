//===- InitAll.h - Register every Loom dialect, pass and pipeline -*- C++
//-*-===//
#ifndef LOOM_INITALL_H
#define LOOM_INITALL_H

namespace mlir {
class DialectRegistry;
namespace loom {

/// Loom's dialects plus the upstream dialects its pipelines produce.
void registerAllDialects(DialectRegistry &registry);

/// Loom's passes and named pipelines, plus every upstream pass (the
/// pipelines are partly written in upstream pass syntax).
void registerAllPasses();

} // namespace loom
} // namespace mlir

#endif // LOOM_INITALL_H
