//===- Communicator.h - The ranks a trainer runs with -----------*- C++ -*-===//
//
// The trainer talks to its peers only through this interface, so data
// parallelism (MPI today-to-be, NCCL later) plugs in without touching the
// training loop. LocalCommunicator is the single-process world.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_COMMUNICATOR_H
#define LOOM_RUNTIME_COMMUNICATOR_H

#include <cstdint>

namespace loom::rt {

class Communicator {
public:
  virtual ~Communicator();
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Element-wise sum of `values` over all ranks, in place.
  virtual void allReduceSum(double *values, int64_t count) = 0;
  virtual void barrier() = 0;
  bool isRoot() const { return rank() == 0; }
};

class LocalCommunicator final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allReduceSum(double *, int64_t) override {}
  void barrier() override {}
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_COMMUNICATOR_H
