//===- MpiCommunicator.h - The MPI backend's communicator -------*- C++ -*-===//
//
// Internal to the MPI plugin, libLoomMpi.so (MpiCommunicator.cpp says how
// it runs collectives; MpiPointToPoint.cpp its pipeline transfers): the
// only code that includes mpi.h.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_MPI_MPICOMMUNICATOR_H
#define LOOM_RUNTIME_SRC_MPI_MPICOMMUNICATOR_H

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "comm/Watchdog.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/World.h"

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

namespace loom::rt::mpi {

/// An all-reduce (and a reduce-scatter, all ranks' blocks together) goes in
/// pieces of at most this many bytes, one after the other. Open MPI's
/// all-reduce algorithms take a temporary buffer about the size of the message
/// from malloc, and glibc serves requests above 32 MiB with a fresh mmap each
/// time, every page of which faults in when touched: a 100 MB all-reduce of 2
/// local ranks took 300 ms (blocking) and 415 ms (non-blocking) with 12k-24k
/// page faults, in 8 MiB pieces 35-40 ms with none, the buffers reused from the
/// heap (CO2's round, which is the whole model, on this project's VMs;
/// bench/RESULTS.md). Larger pieces would save per-piece latency on a slow
/// link, but that is a few round trips per 8 MiB, which such a link takes far
/// longer to carry. LOOM_MPI_PIECE_BYTES sets another size (0: whole messages).
constexpr int64_t kPieceBytes = int64_t(8) << 20;

MPI_Datatype mpiType(DType dtype);
/// Throws Error naming `call` unless `code` is MPI_SUCCESS.
void check(int code, const char *call);
/// `count` as MPI's int count, or an Error naming `what`.
int intCount(int64_t count, const char *what);

class MpiCommunicator final : public Communicator {
public:
  explicit MpiCommunicator(const WorldOptions &options);
  ~MpiCommunicator() override;
  /// duplicate(): a private MPI communicator of the same ranks.
  MpiCommunicator(const MpiCommunicator &parent, MPI_Comm dup);

  int rank() const override { return myRank; }
  int size() const override { return mySize; }
  const char *backend() const override {
    return hierarchical ? "mpi; all-reduces by host" : "mpi";
  }

  void allReduce(void *buf, int64_t count, DType dtype, ReduceOp op) override;
  void reduceScatter(const void *send, void *recv, int64_t count, DType dtype,
                     ReduceOp op) override;
  void allGather(const void *send, void *recv, int64_t count,
                 DType dtype) override;
  void allGatherBlocking(const void *send, void *recv, int64_t count,
                         DType dtype) override;
  void broadcast(void *buf, int64_t count, DType dtype, int root) override;
  void barrier() override;
  void send(const void *buf, int64_t count, DType dtype, int peer) override;
  void recv(void *buf, int64_t count, DType dtype, int peer) override;
  void setCollectiveTimeout(double seconds) override {
    watchdog->setTimeout(seconds);
  }
  double collectiveTimeout() const override { return watchdog->timeout(); }
  bool supportsCommThread() const override {
    return threadLevel >= MPI_THREAD_SERIALIZED;
  }
  std::unique_ptr<Communicator> duplicate() override;
  std::unique_ptr<Communicator> split(int color, int key) override;
  [[noreturn]] void abort(int status) override;

private:
  /// Marks the span of one collective for the watchdog.
  class Watched {
  public:
    Watched(CollectiveWatchdog &watchdog, const char *what, int64_t count = 0,
            DType dtype = DType::F32)
        : watchdog(watchdog) {
      watchdog.begin(what, count, dtype);
    }
    ~Watched() { watchdog.end(); }

  private:
    CollectiveWatchdog &watchdog;
  };

  /// Whether this call should poll politely (see the file comment).
  bool onCommThread() const { return std::this_thread::get_id() != mainThread; }
  /// How long a wait may sleep between polls. A collective that may
  /// overlap compute polls patiently (pauses up to 2 ms); a pipeline stage
  /// waiting for its neighbour's activation or gradient has nothing to
  /// overlap, and each microsecond it oversleeps is bubble (pauses up to
  /// 50 us: the 1/16 rule overslept a 6 ms wait by 0.35 ms).
  enum class Polling { Patient, Prompt };
  /// Polls `requests` until all are done, sleeping between polls; `started`
  /// is when the collective they belong to began (the polling slows down
  /// as it goes on).
  void complete(std::vector<MPI_Request> &requests, const char *call,
                std::chrono::steady_clock::time_point started =
                    std::chrono::steady_clock::now(),
                Polling polling = Polling::Patient);
  /// Watches this communicator's collectives with the given options.
  void watch(double timeout, bool dumpOnSignal);
  /// Whether a reduction of `dtype` by `op` adds in rank order here
  /// (rankOrderedSums; integer sums and maxima are exact in any order).
  bool inRankOrder(DType dtype, ReduceOp op) const {
    return rankOrderedSums && floatSum(dtype, op);
  }
  static bool floatSum(DType dtype, ReduceOp op) {
    return op != ReduceOp::Max && (dtype == DType::F32 || dtype == DType::F64);
  }
  /// Whether a reduce-scatter goes as an all-to-all and a local sum: in
  /// rank order, and on 2 ranks always. There x0 + x1 is the only sum, so
  /// the bits are MPI's, and it is faster: Open MPI's reduce_scatter_block
  /// took 16.5 ms for a 241 KB bucket of 2 ranks at 250 Mbit/s, the
  /// exchange 6.8 ms (bench/RESULTS.md).
  bool scatterByExchange(DType dtype, ReduceOp op) const {
    return inRankOrder(dtype, op) || (mySize == 2 && floatSum(dtype, op));
  }
  /// Runs one MPI collective: `blocking()` on the thread that created the
  /// communicator, `start(&request)` polled politely on the communication
  /// thread (see the file comment). Both return MPI's code.
  template <typename Blocking, typename Start>
  void run(const char *blockingName, const char *startName, Blocking blocking,
           Start start, std::chrono::steady_clock::time_point started) {
    if (!onCommThread())
      return check(blocking(), blockingName);
    std::vector<MPI_Request> requests(1);
    check(start(&requests[0]), startName);
    complete(requests, startName, started);
  }
  /// The rank-ordered reduce-scatter of one piece: `send` holds every
  /// rank's block of `count` elements, packed; `recv` gets this rank's sum.
  void reduceScatterInRankOrder(const void *send, void *recv, int64_t count,
                                DType dtype,
                                std::chrono::steady_clock::time_point started);
  /// The rank-ordered all-reduce of one piece, in place.
  void allReduceInRankOrder(void *buf, int64_t count, DType dtype,
                            std::chrono::steady_clock::time_point started);

  /// Sets up all-reduces in two levels (LOOM_MPI_HIERARCHICAL=1): only on
  /// the main communicator of a job with several hosts, one of them with
  /// several ranks; the same on every rank.
  void splitNodes();
  /// One piece of a two-level all-reduce, in place: a reduce to each
  /// host's first rank, an all-reduce between those (over every NIC of
  /// their hosts), a broadcast back inside each host.
  void allReduceByNode(void *at, int piece, MPI_Datatype type, MPI_Op op,
                       std::chrono::steady_clock::time_point started);

  MPI_Comm comm = MPI_COMM_NULL;
  /// The ranks of this rank's host, and (on a host's first rank) the
  /// hosts' first ranks; MPI_COMM_NULL unless hierarchical.
  MPI_Comm nodeComm = MPI_COMM_NULL, leaderComm = MPI_COMM_NULL;
  bool hierarchical = false;
  int myRank = 0, mySize = 1;
  /// All-reduces go in pieces of this many bytes (0: whole), and
  /// reduce-scatters in pieces of all ranks' blocks together this large.
  int64_t pieceBytes = kPieceBytes;
  /// A reduce-scatter's piece of every rank's block, packed.
  std::vector<char> staging;
  /// The blocks the ranks sent this one, for rank-ordered sums.
  std::vector<char> received;
  bool rankOrderedSums = false;
  int threadLevel = MPI_THREAD_SINGLE;
  bool initializedHere = false;
  std::thread::id mainThread = std::this_thread::get_id();
  /// Every rank's process, for the watchdog's liveness checks.
  std::vector<ProcessIdentity> peers;
  std::unique_ptr<CollectiveWatchdog> watchdog;
  /// send()s not yet known to be delivered, each with the copy it reads,
  /// oldest first.
  struct PendingSend {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<char> data;
  };
  std::deque<PendingSend> pendingSends;
  /// Forgets the delivered sends (all of them: waits for each).
  void retireSends(bool all);
};

} // namespace loom::rt::mpi

#endif // LOOM_RUNTIME_SRC_MPI_MPICOMMUNICATOR_H
