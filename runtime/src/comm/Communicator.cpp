//===- Communicator.cpp - The ranks a trainer runs with ---------*- C++ -*-===//
//
// Out-of-line anchor for the interface's vtable.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Communicator.h"

namespace loom::rt {

Communicator::~Communicator() = default;

} // namespace loom::rt
