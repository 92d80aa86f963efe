//===- Communicator.cpp - The ranks a process trains with -------*- C++ -*-===//
//
// The interface's vtable anchor and the one-rank world, whose gathers and
// scatters are copies (with one rank, slice 0 is the whole buffer).
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace loom::rt {

const char *reduceOpName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return "sum";
  case ReduceOp::Mean:
    return "mean";
  case ReduceOp::Max:
    return "max";
  }
  return "?";
}

Communicator::~Communicator() = default;

void Communicator::send(const void *, int64_t, DType, int peer) {
  throw Error(std::string("the ") + backend() +
              " backend has no point-to-point transfers (a send to rank " +
              std::to_string(peer) + ")");
}

void Communicator::recv(void *, int64_t, DType, int peer) {
  throw Error(std::string("the ") + backend() +
              " backend has no point-to-point transfers (a receive from "
              "rank " +
              std::to_string(peer) + ")");
}

void LocalCommunicator::reduceScatter(const void *send, void *recv,
                                      int64_t count, DType dtype, ReduceOp) {
  if (send != recv && count > 0)
    std::memmove(recv, send, static_cast<size_t>(count) * dtypeSize(dtype));
}

void LocalCommunicator::allGather(const void *send, void *recv, int64_t count,
                                  DType dtype) {
  if (send != recv && count > 0)
    std::memmove(recv, send, static_cast<size_t>(count) * dtypeSize(dtype));
}

void LocalCommunicator::abort(int status) {
  std::fflush(nullptr);
  std::exit(status);
}

} // namespace loom::rt
