//===- Communicator.h - The ranks a process trains with ---------*- C++ -*-===//
//
// The trainer and the loom_rt_* collectives of compiled code reach their
// peers only through this interface, so a backend (MPI on CPU today, NCCL
// on GPU later) plugs in without touching either. Buffers are plain pointers
// to `count` dense elements: host memory for MPI, device memory for a GPU
// backend. Every rank must issue the same collectives in the same order.
//
// LocalCommunicator is the one-rank world: reductions are identities and
// gathers/scatters are copies, so single-process runs need no MPI at all.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_COMMUNICATOR_H
#define LOOM_RUNTIME_COMMUNICATOR_H

#include "loom/runtime/DType.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom::rt {

/// Values match abi.h's loom_reduce_op. Mean is the sum divided by the
/// number of ranks (truncating for integer types).
enum class ReduceOp { Sum, Mean, Max };
const char *reduceOpName(ReduceOp op);

class Communicator {
public:
  virtual ~Communicator();
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "local", "mpi", ...; for messages.
  virtual const char *backend() const = 0;

  /// In place: buf = op over ranks of buf.
  virtual void allReduce(void *buf, int64_t count, DType dtype,
                         ReduceOp op) = 0;
  /// recv (count elements) = slice rank() of op over ranks of send
  /// (count * size() elements).
  virtual void reduceScatter(const void *send, void *recv, int64_t count,
                             DType dtype, ReduceOp op) = 0;
  /// recv (count * size() elements) = concatenation over ranks of send.
  virtual void allGather(const void *send, void *recv, int64_t count,
                         DType dtype) = 0;
  /// allGather that runs the same way on whichever thread calls it. MPI
  /// does not match a blocking collective with a non-blocking one, and the
  /// MPI backend runs the collectives of the communication thread
  /// non-blocking: an exchange that must match however each rank reached
  /// it (the collective check, which may run on either thread) uses this.
  virtual void allGatherBlocking(const void *send, void *recv, int64_t count,
                                 DType dtype) {
    allGather(send, recv, count, dtype);
  }
  /// In place: buf = root's buf.
  virtual void broadcast(void *buf, int64_t count, DType dtype, int root) = 0;
  virtual void barrier() = 0;

  /// Point-to-point transfers between pipeline stages. send hands `count`
  /// elements to rank `peer` of this communicator and returns without
  /// waiting for it (the backend copies them first); recv blocks until the
  /// next tensor `peer` sent to this rank has arrived in `buf`. Transfers
  /// between two ranks arrive in the order they were sent. Backends without
  /// them throw Error.
  virtual void send(const void *buf, int64_t count, DType dtype, int peer);
  virtual void recv(void *buf, int64_t count, DType dtype, int peer);

  /// The longest one collective may wait for the other ranks before the job
  /// is stopped (0: no limit). Backends that cannot time out ignore it.
  virtual void setCollectiveTimeout(double seconds) { (void)seconds; }
  virtual double collectiveTimeout() const { return 0; }

  /// Whether the loom_rt_* collectives may run on a communication thread
  /// (calls from a thread other than the one that created the communicator,
  /// never two at once).
  virtual bool supportsCommThread() const { return true; }

  /// A communicator of the same ranks whose collectives never match this
  /// one's, for a thread that runs collectives while this communicator's
  /// run (CO2's background checkpoint writers). Its collectives wait
  /// without a timeout; dead peers are still noticed where the backend
  /// watches for them. Collective: every rank calls it at the same point.
  /// nullptr when the backend cannot run two threads' collectives at once.
  virtual std::unique_ptr<Communicator> duplicate() { return nullptr; }

  /// The ranks of this communicator that pass the same `color`, numbered by
  /// `key` (ties by rank): a sub-group whose collectives involve only them
  /// (MPI_Comm_split; the groups of a mesh axis, ScopedCurrentCommunicator).
  /// Collective: every rank calls it at the same point. nullptr when the
  /// backend has no sub-groups.
  virtual std::unique_ptr<Communicator> split(int color, int key) {
    (void)color;
    (void)key;
    return nullptr;
  }

  /// Ends this process with `status` and, for a multi-rank backend, every
  /// other rank of the job. Callers print their message first.
  [[noreturn]] virtual void abort(int status) = 0;

  /// Element-wise sum of `values` over all ranks, in place.
  void allReduceSum(double *values, int64_t count) {
    allReduce(values, count, DType::F64, ReduceOp::Sum);
  }
  bool isRoot() const { return rank() == 0; }
};

class LocalCommunicator final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char *backend() const override { return "local"; }
  void allReduce(void *, int64_t, DType, ReduceOp) override {}
  void reduceScatter(const void *send, void *recv, int64_t count, DType dtype,
                     ReduceOp op) override;
  void allGather(const void *send, void *recv, int64_t count,
                 DType dtype) override;
  std::unique_ptr<Communicator> split(int, int) override {
    return std::make_unique<LocalCommunicator>();
  }
  void broadcast(void *, int64_t, DType, int) override {}
  void barrier() override {}
  std::unique_ptr<Communicator> duplicate() override {
    return std::make_unique<LocalCommunicator>();
  }
  [[noreturn]] void abort(int status) override;
};

/// Collective: every rank passes its failure message ("" if it has none).
/// If any rank failed, all ranks throw: the lowest failing rank a JobError
/// with its message (prefixed "rank R: " unless R is 0), the others a
/// SilentError, so the failure is printed once and no rank is left waiting.
void agreeOnFailure(Communicator &comm, const std::string &failure);

/// Throws the failure that every rank detected from values they share (a
/// reduced loss, the result of a collective check): rank 0 a JobError with
/// `message`, the others a SilentError, as agreeOnFailure would, without
/// its collective.
[[noreturn]] void failTogether(const Communicator &comm,
                               const std::string &message);

/// Something every rank of a job must have the same of, as this rank sees
/// it: `name` as the user knows it ("--steps", "the artifact's content").
struct JobSetting {
  std::string name;
  std::string value;
};

/// Collective: ranks compare their settings with rank 0's. Ranks that run
/// other artifacts or options would issue other collectives (a hang, or an
/// all-reduce of another model's gradients that completes with wrong data),
/// so a difference fails the job through agreeOnFailure, naming the lowest
/// differing rank, the first differing setting and both values. Every rank
/// must pass the same names in the same order. No-op on one rank.
void agreeOnSettings(Communicator &comm,
                     const std::vector<JobSetting> &settings);

/// `comm` wrapped so that before each collective the ranks compare what
/// they are about to issue (one small all-gather) and stop the job, naming
/// the collective and what each rank issued, where they differ
/// (`loom-run --check-collectives`; runtime/src/comm/CheckedCommunicator.h).
/// Every rank of the job must wrap its communicator, or none. A one-rank
/// communicator is returned as it is.
std::unique_ptr<Communicator>
checkEveryCollective(std::unique_ptr<Communicator> comm);

/// Sets the collective timeout of `comm` for the lifetime of the guard, e.g.
/// to let ranks wait without limit while rank 0 writes a checkpoint.
class ScopedCollectiveTimeout {
public:
  ScopedCollectiveTimeout(Communicator &comm, double seconds)
      : comm(comm), previous(comm.collectiveTimeout()) {
    comm.setCollectiveTimeout(seconds);
  }
  ~ScopedCollectiveTimeout() { comm.setCollectiveTimeout(previous); }
  ScopedCollectiveTimeout(const ScopedCollectiveTimeout &) = delete;
  ScopedCollectiveTimeout &operator=(const ScopedCollectiveTimeout &) = delete;

private:
  Communicator &comm;
  double previous;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_COMMUNICATOR_H
