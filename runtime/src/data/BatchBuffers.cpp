//===- BatchBuffers.cpp - Binding batch buffers to an artifact --*- C++ -*-===//
//
// Apart from Data.cpp so that the data sources link without the artifact
// loader (runtime/fuzz).
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Artifact.h"
#include "loom/runtime/Data.h"

namespace loom::rt {

BatchBuffers BatchBuffers::forArtifact(Artifact &artifact) {
  const TaskSpec &task = artifact.manifest().task;
  BatchBuffers buffers;
  // The manifest parser has already checked names, shapes and dtypes of the
  // task inputs, so only presence needs handling here.
  if (task.kind == TaskSpec::Kind::LM) {
    buffers.tokens = artifact.tensor("tokens").dataAs<int32_t>();
    buffers.targets = artifact.tensor("targets").dataAs<int32_t>();
    if (task.documents) {
      buffers.segments = artifact.tensor("segments").dataAs<int32_t>();
      buffers.positions = artifact.tensor("positions").dataAs<int32_t>();
    }
  } else if (task.kind == TaskSpec::Kind::Classify) {
    Tensor &x = artifact.tensor("x");
    buffers.x = x.data();
    buffers.xIsF64 = x.dtype() == DType::F64;
    buffers.y = artifact.tensor("y").dataAs<int32_t>();
  } else {
    buffers.others = artifact.inputs();
  }
  return buffers;
}

} // namespace loom::rt
