//===- CheckedCommunicator.h - Ranks compare each collective first -*- C++
//-*-===//
//
// Internal to the runtime. `loom-run --check-collectives`, the debug mode of
// docs/reliability.md scenario 3: before each collective the ranks
// gather its description (its number, kind, element count, dtype, and
// reduction or root) and, where the descriptions differ, stop the job at
// once, naming the collective and what each rank issued. Without it, ranks
// whose schedules part wait until --collective-timeout (scenario 2) or,
// worse, complete a collective with mismatched buffers (an all-reduce of
// 2N elements on one rank and N on another may finish on some MPI
// algorithms, with wrong data). The check costs one all-gather of 48 bytes
// per rank before every collective; it cannot tell apart two collectives
// that look the same (two all-reduces of equal size of different tensors).
//
// GPU artifacts' collectives go to the device communicator (NCCL), not
// through this one: only host collectives are checked.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_COMM_CHECKEDCOMMUNICATOR_H
#define LOOM_RUNTIME_SRC_COMM_CHECKEDCOMMUNICATOR_H

#include "loom/runtime/Communicator.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace loom::rt {

/// One rank's description of a collective, as the ranks exchange it.
struct CollectiveCall {
  enum Kind : int64_t {
    AllReduce = 1,
    ReduceScatter,
    AllGather,
    Broadcast,
    Barrier
  };
  /// 1-based number among the checked collectives of this communicator.
  int64_t seq = 0;
  int64_t kind = 0;
  int64_t count = 0;
  /// DType, ReduceOp and root rank as integers; -1 where the kind has none.
  int64_t dtype = -1;
  int64_t op = -1;
  int64_t root = -1;

  bool operator==(const CollectiveCall &other) const;
};

/// "all_reduce (36 f64, sum)", "broadcast (4 i64 from rank 0)", "barrier".
std::string describeCall(const CollectiveCall &call);

/// What differs between the calls of ranks 0..N-1 (indexed by rank), as
/// the message that stops the job; "" when every rank issued the same.
std::string describeCallMismatch(const std::vector<CollectiveCall> &byRank);

class CheckedCommunicator final : public Communicator {
public:
  explicit CheckedCommunicator(std::unique_ptr<Communicator> inner)
      : inner(std::move(inner)) {}

  int rank() const override { return inner->rank(); }
  int size() const override { return inner->size(); }
  const char *backend() const override { return inner->backend(); }

  void allReduce(void *buf, int64_t count, DType dtype, ReduceOp op) override;
  void reduceScatter(const void *send, void *recv, int64_t count, DType dtype,
                     ReduceOp op) override;
  void allGather(const void *send, void *recv, int64_t count,
                 DType dtype) override;
  void allGatherBlocking(const void *send, void *recv, int64_t count,
                         DType dtype) override;
  void broadcast(void *buf, int64_t count, DType dtype, int root) override;
  void barrier() override;
  /// Unchecked: a transfer involves two ranks, not the group.
  void send(const void *buf, int64_t count, DType dtype, int peer) override {
    inner->send(buf, count, dtype, peer);
  }
  void recv(void *buf, int64_t count, DType dtype, int peer) override {
    inner->recv(buf, count, dtype, peer);
  }

  void setCollectiveTimeout(double seconds) override {
    inner->setCollectiveTimeout(seconds);
  }
  double collectiveTimeout() const override {
    return inner->collectiveTimeout();
  }
  bool supportsCommThread() const override {
    return inner->supportsCommThread();
  }
  /// Unchecked: its collectives (a checkpoint writer's agreement) run on
  /// a thread of their own, in no order against this one's.
  std::unique_ptr<Communicator> duplicate() override {
    return inner->duplicate();
  }
  /// Unchecked: --check-collectives compares the collectives of all ranks.
  std::unique_ptr<Communicator> split(int color, int key) override {
    return inner->split(color, key);
  }
  [[noreturn]] void abort(int status) override;

  /// Collectives checked so far.
  int64_t checked() const { return issued.load(); }

private:
  /// Exchanges `call` (numbered here) with the other ranks; returns only if
  /// every rank issued the same, else stops the job.
  void check(CollectiveCall call);

  std::unique_ptr<Communicator> inner;
  std::atomic<int64_t> issued{0};
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_COMM_CHECKEDCOMMUNICATOR_H
