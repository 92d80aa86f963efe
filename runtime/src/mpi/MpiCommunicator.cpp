//===- MpiCommunicator.cpp - Collectives over MPI ---------------*- C++ -*-===//
//
// The MPI plugin, libLoomMpi.so (with MpiPointToPoint.cpp, through
// MpiCommunicator.h the only code that includes mpi.h), built into its own
// library so that libLoomRuntime.so has no dependency on
// libmpi (support/Plugin.h); comm/MpiPlugin.cpp loads it for multi-rank jobs
// through loom_mpi_plugin_connect at the end of this file. On the thread that
// created the communicator, collectives are MPI's blocking ones: Open MPI's
// tuned blocking all-reduce is about twice as fast as its non-blocking one for
// large buffers (measured on 2 ranks: 16 MiB in 6.5 ms against 13-15 ms).
// On the communication thread (CommQueue.h) they are the non-blocking ones,
// completed by polling MPI_Test with short sleeps: a blocking call there
// would spin (Open MPI polls even with mpi_yield_when_idle), taking a core
// from the compute the collective is meant to overlap with; on 2 cores with
// 2 ranks that made overlapped steps slower than synchronous ones. The
// sleeps are capped far below a link's transfer time, and the kernel keeps
// moving the bytes already handed to its socket buffers meanwhile.
// A CollectiveWatchdog thread (Watchdog.h) watches every
// call, because a blocking call gives no way out when a peer never arrives;
// when it gives up it prints why and calls MPI_Abort from its thread, which
// MPI_THREAD_MULTIPLE allows (with a lesser thread level it ends just this
// process, and the launcher stops the others).
//
// For a given rank count and buffer size Open MPI always picks the same
// reduction algorithm, and every algorithm hands all ranks the same result,
// so resumed runs are bitwise identical to uninterrupted ones and the
// ranks' models stay identical (which Replicas.cpp checks at every save).
// Its all-reduce and reduce-scatter algorithms add the ranks' values in
// different orders, though: above 2 ranks a ZeRO job (reduce-scatters)
// drifts from plain data parallelism (all-reduces) by rounding. With
// --reduce-order=rank (WorldOptions::rankOrderedSums) floating-point sums
// are Loom's own: an all-to-all of the blocks, a sum in rank order, and for
// an all-reduce an all-gather of the sums; the same bytes cross the links
// as with a ring.
//
//===----------------------------------------------------------------------===//

#include "mpi/MpiCommunicator.h"

#include "loom/runtime/CurrentCommunicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Flags.h"
#include "loom/runtime/World.h"
#include "support/Clock.h"
#include "support/Export.h"
#include "support/Plugin.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <unistd.h>
#include <vector>

namespace loom::rt::mpi {

namespace {

/// MPI counts are ints: no piece has more elements.
constexpr int64_t kMaxPieceElements = int64_t(1) << 30;

/// The piece size LOOM_MPI_PIECE_BYTES asks for, or kPieceBytes.
int64_t pieceBytesFromEnvironment() {
  const char *text = std::getenv("LOOM_MPI_PIECE_BYTES");
  if (!text || !*text)
    return kPieceBytes;
  int64_t value = 0;
  if (!parseInteger(text, value) || value < 0)
    fail("LOOM_MPI_PIECE_BYTES=%s: expected a number of bytes, 0 or more "
         "(0: whole messages)",
         text);
  return value;
}

MPI_Op mpiOp(ReduceOp op) { return op == ReduceOp::Max ? MPI_MAX : MPI_SUM; }

template <typename T>
void divideAll(void *buf, int64_t count, int divisor) {
  T *values = static_cast<T *>(buf);
  for (int64_t i = 0; i < count; ++i)
    values[i] = static_cast<T>(values[i] / static_cast<T>(divisor));
}

/// Mean = sum / ranks, truncating for integers.
void divide(void *buf, int64_t count, DType dtype, int divisor) {
  switch (dtype) {
  case DType::F32:
    return divideAll<float>(buf, count, divisor);
  case DType::F64:
    return divideAll<double>(buf, count, divisor);
  case DType::I32:
    return divideAll<int32_t>(buf, count, divisor);
  case DType::I64:
    return divideAll<int64_t>(buf, count, divisor);
  }
}

/// out[e] = ((blocks[0][e] + blocks[1][e]) + blocks[2][e]) + ... for the
/// `ranks` blocks of `count` elements packed in `blocks`.
template <typename T>
void sumInRankOrder(const void *blocks, void *out, int ranks, int64_t count) {
  const T *from = static_cast<const T *>(blocks);
  T *sum = static_cast<T *>(out);
  std::copy(from, from + count, sum);
  for (int r = 1; r < ranks; ++r)
    for (int64_t e = 0; e < count; ++e)
      sum[e] += from[r * count + e];
}

void sumInRankOrder(const void *blocks, void *out, int ranks, int64_t count,
                    DType dtype) {
  if (dtype == DType::F64)
    return sumInRankOrder<double>(blocks, out, ranks, count);
  sumInRankOrder<float>(blocks, out, ranks, count);
}

} // namespace

MPI_Datatype mpiType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return MPI_FLOAT;
  case DType::F64:
    return MPI_DOUBLE;
  case DType::I32:
    return MPI_INT32_T;
  case DType::I64:
    return MPI_INT64_T;
  }
  return MPI_BYTE;
}

void check(int code, const char *call) {
  if (code == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail("%s failed: %s", call, text);
}

int intCount(int64_t count, const char *what) {
  if (count > INT_MAX)
    fail("%s of %lld elements per rank exceeds MPI's int element count", what,
         static_cast<long long>(count));
  return static_cast<int>(count);
}

MpiCommunicator::MpiCommunicator(const WorldOptions &options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Busy-polling ranks starve the kernel's network stack and each other
    // on small machines (docs: toolchain.md); the user's setting wins.
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", /*overwrite=*/0);
    // Open MPI's non-blocking all-reduce (libnbc) picks a binomial
    // reduce-then-broadcast for fewer than 4 ranks and for in-place
    // buffers: the two halves run one after the other, so each link
    // direction idles half the time (measured on 2 hosts at 200 Mbit/s:
    // overlapped steps 40 ms against 30 ms with the ring). The ring sends
    // and receives at once, like the blocking tuned algorithms.
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
    // The watchdog needs MULTIPLE to abort from its thread, the
    // communication thread of the collectives SERIALIZED (supportsCommThread;
    // below it they run on the caller); a library without MULTIPLE returns
    // the highest level it has.
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &threadLevel),
          "MPI_Init_thread");
    initializedHere = true;
  } else {
    MPI_Query_thread(&threadLevel);
  }
  // A private communicator whose errors come back as codes (the default
  // handler would kill the process without a word about what it was doing).
  check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
  check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN),
        "MPI_Comm_set_errhandler");
  MPI_Comm_rank(comm, &myRank);
  MPI_Comm_size(comm, &mySize);
  rankOrderedSums = options.rankOrderedSums;
  // The pieces are collectives of their own: every rank must cut alike.
  // So is the choice of all-reducing by host (splitNodes): both settings
  // travel in one all-gather.
  pieceBytes = pieceBytesFromEnvironment();
  const char *byHost = std::getenv("LOOM_MPI_HIERARCHICAL");
  const int64_t mine[2] = {pieceBytes, byHost && std::strcmp(byHost, "1") == 0};
  std::vector<int64_t> all(2 * static_cast<size_t>(mySize));
  check(MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, comm),
        "MPI_Allgather");
  for (int r = 1; r < mySize; ++r) {
    if (all[2 * r] != all[0])
      fail("LOOM_MPI_PIECE_BYTES differs between ranks: %lld bytes on rank "
           "0, %lld on rank %d; every rank must split large collectives "
           "alike (0: whole messages; unset: %lld)",
           static_cast<long long>(all[0]), static_cast<long long>(all[2 * r]),
           r, static_cast<long long>(kPieceBytes));
    if (all[2 * r + 1] != all[1])
      fail("LOOM_MPI_HIERARCHICAL differs between ranks: every rank must "
           "all-reduce alike (1: by host, else flat)");
  }

  peers.resize(mySize);
  ProcessIdentity self = currentProcessIdentity();
  check(MPI_Allgather(&self, sizeof(self), MPI_BYTE, peers.data(), sizeof(self),
                      MPI_BYTE, comm),
        "MPI_Allgather");
  if (mine[1])
    splitNodes();
  watch(options.collectiveTimeout, /*dumpOnSignal=*/true);
}

void MpiCommunicator::splitNodes() {
  // LOOM_MPI_HIERARCHICAL=1 asks for two levels (the ranks agreed on it in
  // the constructor). Off by default: it moves a host's traffic onto one
  // rank (its NICs then carry one flow, which MPI's multi-rail TCP splits
  // over all of them), but changes the order of the sums from MPI's flat
  // algorithms (so the bits of existing multi-host runs), and on the
  // emulated cluster it was no faster with one NIC (bench/RESULTS.md, "Two
  // NICs per emulated host"). Rank-ordered sums are Loom's own exchange;
  // one host, or one rank per host, has nothing to gain.
  if (mySize < 2 || rankOrderedSums)
    return;
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, myRank, MPI_INFO_NULL,
                            &node),
        "MPI_Comm_split_type");
  int nodeRank = 0, nodeSize = 1;
  MPI_Comm_rank(node, &nodeRank);
  MPI_Comm_size(node, &nodeSize);
  // The hosts (their first ranks counted) and the most ranks on one, agreed
  // by every rank, so that all take the same path.
  int first = nodeRank == 0 ? 1 : 0, hosts = 0, most = 0;
  check(MPI_Allreduce(&first, &hosts, 1, MPI_INT, MPI_SUM, comm),
        "MPI_Allreduce");
  check(MPI_Allreduce(&nodeSize, &most, 1, MPI_INT, MPI_MAX, comm),
        "MPI_Allreduce");
  hierarchical = hosts > 1 && most > 1;
  if (!hierarchical) {
    MPI_Comm_free(&node);
    return;
  }
  nodeComm = node;
  check(MPI_Comm_set_errhandler(nodeComm, MPI_ERRORS_RETURN),
        "MPI_Comm_set_errhandler");
  check(MPI_Comm_split(comm, nodeRank == 0 ? 0 : MPI_UNDEFINED, myRank,
                       &leaderComm),
        "MPI_Comm_split");
  if (leaderComm != MPI_COMM_NULL)
    check(MPI_Comm_set_errhandler(leaderComm, MPI_ERRORS_RETURN),
          "MPI_Comm_set_errhandler");
}

void MpiCommunicator::allReduceByNode(
    void *at, int piece, MPI_Datatype type, MPI_Op op,
    std::chrono::steady_clock::time_point started) {
  int nodeRank = 0;
  MPI_Comm_rank(nodeComm, &nodeRank);
  void *send = nodeRank == 0 ? MPI_IN_PLACE : at;
  run(
      "MPI_Reduce", "MPI_Ireduce",
      [&] { return MPI_Reduce(send, at, piece, type, op, 0, nodeComm); },
      [&](MPI_Request *request) {
        return MPI_Ireduce(send, at, piece, type, op, 0, nodeComm, request);
      },
      started);
  if (leaderComm != MPI_COMM_NULL)
    run(
        "MPI_Allreduce", "MPI_Iallreduce",
        [&] {
          return MPI_Allreduce(MPI_IN_PLACE, at, piece, type, op, leaderComm);
        },
        [&](MPI_Request *request) {
          return MPI_Iallreduce(MPI_IN_PLACE, at, piece, type, op, leaderComm,
                                request);
        },
        started);
  run(
      "MPI_Bcast", "MPI_Ibcast",
      [&] { return MPI_Bcast(at, piece, type, 0, nodeComm); },
      [&](MPI_Request *request) {
        return MPI_Ibcast(at, piece, type, 0, nodeComm, request);
      },
      started);
}

MpiCommunicator::MpiCommunicator(const MpiCommunicator &parent, MPI_Comm dup)
    : comm(dup), myRank(parent.myRank), mySize(parent.mySize),
      pieceBytes(parent.pieceBytes), rankOrderedSums(parent.rankOrderedSums),
      threadLevel(parent.threadLevel), peers(parent.peers) {
  check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN),
        "MPI_Comm_set_errhandler");
  // No timeout (a writer waits for its peers' writes however long they
  // take), but a dead peer still stops the job. SIGUSR1 stays with the
  // main communicator's watchdog: one handler per process.
  watch(/*timeout=*/0, /*dumpOnSignal=*/false);
}

void MpiCommunicator::watch(double timeout, bool dumpOnSignal) {
  CollectiveWatchdog::Options options;
  options.rank = myRank;
  options.timeout = timeout;
  options.peers = peers;
  options.fail = [this](const std::string &reason) { abortJob(reason, this); };
  options.dumpOnSignal = dumpOnSignal;
  watchdog = std::make_unique<CollectiveWatchdog>(std::move(options));
}

std::unique_ptr<Communicator> MpiCommunicator::duplicate() {
  // The duplicate's collectives run on another thread while this one's
  // run, which only MPI_THREAD_MULTIPLE allows.
  if (threadLevel < MPI_THREAD_MULTIPLE)
    return nullptr;
  MPI_Comm dup = MPI_COMM_NULL;
  check(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
  return std::make_unique<MpiCommunicator>(*this, dup);
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  MPI_Comm sub = MPI_COMM_NULL;
  check(MPI_Comm_split(comm, color, key, &sub), "MPI_Comm_split");
  auto group = std::make_unique<MpiCommunicator>(*this, sub);
  // A sub-group's collectives wait as long as the job's; a dead peer
  // anywhere in the job stops them (peers: every rank's process).
  group->watchdog->setTimeout(watchdog->timeout());
  MPI_Comm_rank(sub, &group->myRank);
  MPI_Comm_size(sub, &group->mySize);
  return group;
}

MpiCommunicator::~MpiCommunicator() {
  retireSends(/*all=*/true);
  watchdog.reset();
  for (MPI_Comm *c : {&leaderComm, &nodeComm, &comm})
    if (*c != MPI_COMM_NULL)
      MPI_Comm_free(c);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (initializedHere && !finalized)
    MPI_Finalize();
}

void MpiCommunicator::abort(int status) {
  std::fflush(nullptr);
  if (std::this_thread::get_id() != mainThread &&
      threadLevel < MPI_THREAD_MULTIPLE)
    _exit(status); // MPI may not be called from this thread
  MPI_Abort(MPI_COMM_WORLD, status);
  _exit(status); // MPI_Abort does not return, but if it did...
}

void MpiCommunicator::complete(std::vector<MPI_Request> &requests,
                               const char *call,
                               std::chrono::steady_clock::time_point started,
                               Polling polling) {
  // Every hop of a collective (a rendezvous, a round of the algorithm) waits
  // for the peer's next poll, so the pauses start short: 2 us doubling to
  // 20 us, with a 1 ns timer slack on this thread so they are not rounded
  // up to the default 50 us. A long (bandwidth-bound) collective is polled
  // less often, at 1/16 of its elapsed time up to 2 ms: each wakeup of
  // this high-priority thread preempts compute, and tens of thousands of
  // them during a 50 ms all-reduce slowed the compute it overlapped by
  // half (measured: CO2 on 100 Mbit/s links); the kernel keeps sending
  // what is already in the socket buffers meanwhile.
  usePreciseSleeps();
  long sleepNs = 2000;
  // Several tests per wakeup: Open MPI advances its non-blocking collectives
  // (libnbc) only on some of its progress calls, so a single test per
  // wakeup left each round of a collective waiting several sleeps
  // (measured: a 256-byte all-reduce 0.3-3 ms with one test, 0.1-0.2 ms
  // with eight).
  //
  // A long collective (CO2's outer all-reduce: tens of milliseconds on a
  // slow link) is polled less: after its first millisecond two tests per
  // wakeup and sleeps of 1/16 of the time so far, up to 2 ms. Each wakeup
  // preempts compute on this core; with eight tests and sleeps up to
  // 0.5 ms the thread took 9-11 % of a core during CO2 at 100 Mbit/s, with
  // these 3-4 %, still with 96-100 % of the all-reduce hidden
  // (bench/RESULTS.md).
  constexpr int kTestsPerWakeup = 8, kTestsPerLongWakeup = 2;
  constexpr long kLongNs = 1000000;
  const long maxSleepNs = polling == Polling::Prompt ? 50000 : 2000000;
  long elapsedNs = 0;
  for (;;) {
    const int tests =
        elapsedNs < kLongNs ? kTestsPerWakeup : kTestsPerLongWakeup;
    for (int i = 0; i < tests; ++i) {
      int done = 0;
      check(MPI_Testall(static_cast<int>(requests.size()), requests.data(),
                        &done, MPI_STATUSES_IGNORE),
            call);
      if (done)
        return;
    }
    timespec pause{0, sleepNs};
    nanosleep(&pause, nullptr);
    elapsedNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now() - started)
                    .count();
    sleepNs = std::min(sleepNs * 2, 20000L);
    sleepNs = std::min(std::max(elapsedNs / 16, sleepNs), maxSleepNs);
  }
}

/// Calls `piece(pointer, elements)` for every slice of at most `pieceBytes`
/// (0: as large as MPI's int counts allow) of `buf`, in order.
template <typename Fn>
void forEachPiece(void *buf, int64_t count, DType dtype, int64_t pieceBytes,
                  Fn piece) {
  char *bytes = static_cast<char *>(buf);
  const int64_t elementSize = static_cast<int64_t>(dtypeSize(dtype));
  const int64_t most =
      pieceBytes == 0
          ? kMaxPieceElements
          : std::clamp<int64_t>(pieceBytes / elementSize, 1, kMaxPieceElements);
  for (int64_t offset = 0; offset < count; offset += most)
    piece(bytes + offset * elementSize,
          static_cast<int>(std::min(most, count - offset)));
}

void MpiCommunicator::allReduce(void *buf, int64_t count, DType dtype,
                                ReduceOp op) {
  Watched watched(*watchdog, "all_reduce", count, dtype);
  const auto started = std::chrono::steady_clock::now();
  const MPI_Datatype type = mpiType(dtype);
  // One piece in flight at a time: several at once would each take a
  // temporary buffer, and together they are the size that faults.
  forEachPiece(buf, count, dtype, pieceBytes, [&](void *at, int piece) {
    if (inRankOrder(dtype, op))
      return allReduceInRankOrder(at, piece, dtype, started);
    if (hierarchical)
      return allReduceByNode(at, piece, type, mpiOp(op), started);
    run(
        "MPI_Allreduce", "MPI_Iallreduce",
        [&] {
          return MPI_Allreduce(MPI_IN_PLACE, at, piece, type, mpiOp(op), comm);
        },
        [&](MPI_Request *request) {
          return MPI_Iallreduce(MPI_IN_PLACE, at, piece, type, mpiOp(op), comm,
                                request);
        },
        started);
  });
  if (op == ReduceOp::Mean)
    divide(buf, count, dtype, mySize);
}

void MpiCommunicator::reduceScatter(const void *send, void *recv, int64_t count,
                                    DType dtype, ReduceOp op) {
  Watched watched(*watchdog, "reduce_scatter", count, dtype);
  intCount(count, "reduce_scatter");
  const auto started = std::chrono::steady_clock::now();
  const int64_t elementSize = static_cast<int64_t>(dtypeSize(dtype));
  // Pieces as for all-reduce (its temporary buffer is the size of all the
  // ranks' blocks: a 97 MiB one took 700 ms with 35k page faults): piece k
  // reduces elements [o, o + c) of every rank's block, which lie apart in
  // `send`, so they are packed first.
  const int64_t most =
      pieceBytes == 0
          ? count
          : std::max<int64_t>(1, pieceBytes / (elementSize * mySize));
  const char *from = static_cast<const char *>(send);
  int64_t offset = 0;
  do { // once for an empty block, as every rank must take part
    const int64_t piece = std::min(most, count - offset);
    const void *pieceSend = send;
    if (piece < count) {
      staging.resize(static_cast<size_t>(mySize * piece * elementSize));
      for (int r = 0; r < mySize; ++r)
        std::memcpy(staging.data() + r * piece * elementSize,
                    from + (r * count + offset) * elementSize,
                    static_cast<size_t>(piece * elementSize));
      pieceSend = staging.data();
    }
    void *pieceRecv = static_cast<char *>(recv) + offset * elementSize;
    if (scatterByExchange(dtype, op)) {
      reduceScatterInRankOrder(pieceSend, pieceRecv, piece, dtype, started);
    } else {
      const int n = static_cast<int>(piece);
      run(
          "MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block",
          [&] {
            return MPI_Reduce_scatter_block(pieceSend, pieceRecv, n,
                                            mpiType(dtype), mpiOp(op), comm);
          },
          [&](MPI_Request *request) {
            return MPI_Ireduce_scatter_block(pieceSend, pieceRecv, n,
                                             mpiType(dtype), mpiOp(op), comm,
                                             request);
          },
          started);
    }
    offset += piece;
  } while (offset < count);
  if (op == ReduceOp::Mean)
    divide(recv, count, dtype, mySize);
}

void MpiCommunicator::reduceScatterInRankOrder(
    const void *send, void *recv, int64_t count, DType dtype,
    std::chrono::steady_clock::time_point started) {
  const int n = intCount(count, "reduce_scatter");
  const MPI_Datatype type = mpiType(dtype);
  received.resize(static_cast<size_t>(mySize * count) * dtypeSize(dtype));
  run(
      "MPI_Alltoall", "MPI_Ialltoall",
      [&] {
        return MPI_Alltoall(send, n, type, received.data(), n, type, comm);
      },
      [&](MPI_Request *request) {
        return MPI_Ialltoall(send, n, type, received.data(), n, type, comm,
                             request);
      },
      started);
  sumInRankOrder(received.data(), recv, mySize, count, dtype);
}

void MpiCommunicator::allReduceInRankOrder(
    void *buf, int64_t count, DType dtype,
    std::chrono::steady_clock::time_point started) {
  // The piece as mySize blocks (the last padded with zeros, whose sums are
  // dropped); each rank sums one block, then all gather the sums.
  const size_t elementSize = dtypeSize(dtype);
  const int64_t block = (count + mySize - 1) / mySize;
  staging.assign(static_cast<size_t>(mySize * block) * elementSize, 0);
  std::memcpy(staging.data(), buf, static_cast<size_t>(count) * elementSize);
  char *own =
      staging.data() + static_cast<size_t>(myRank * block) * elementSize;
  reduceScatterInRankOrder(staging.data(), own, block, dtype, started);
  const int n = intCount(block, "all_reduce");
  const MPI_Datatype type = mpiType(dtype);
  run(
      "MPI_Allgather", "MPI_Iallgather",
      [&] {
        return MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, staging.data(),
                             n, type, comm);
      },
      [&](MPI_Request *request) {
        return MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL,
                              staging.data(), n, type, comm, request);
      },
      started);
  std::memcpy(buf, staging.data(), static_cast<size_t>(count) * elementSize);
}

void MpiCommunicator::allGather(const void *send, void *recv, int64_t count,
                                DType dtype) {
  Watched watched(*watchdog, "all_gather", count, dtype);
  int n = intCount(count, "all_gather");
  // Compiled code may gather in place, sending from its own slice.
  const char *ownSlice =
      static_cast<const char *>(recv) + myRank * count * dtypeSize(dtype);
  const void *from = send == ownSlice ? MPI_IN_PLACE : send;
  const MPI_Datatype type = mpiType(dtype);
  run(
      "MPI_Allgather", "MPI_Iallgather",
      [&] { return MPI_Allgather(from, n, type, recv, n, type, comm); },
      [&](MPI_Request *request) {
        return MPI_Iallgather(from, n, type, recv, n, type, comm, request);
      },
      std::chrono::steady_clock::now());
}

void MpiCommunicator::allGatherBlocking(const void *send, void *recv,
                                        int64_t count, DType dtype) {
  Watched watched(*watchdog, "all_gather", count, dtype);
  int n = intCount(count, "all_gather");
  check(MPI_Allgather(send, n, mpiType(dtype), recv, n, mpiType(dtype), comm),
        "MPI_Allgather");
}

void MpiCommunicator::broadcast(void *buf, int64_t count, DType dtype,
                                int root) {
  Watched watched(*watchdog, "broadcast", count, dtype);
  std::vector<MPI_Request> requests;
  const bool async = onCommThread();
  // Broadcasts take no temporary buffer: the largest pieces, all at once.
  forEachPiece(buf, count, dtype, /*pieceBytes=*/0, [&](void *at, int piece) {
    if (!async)
      check(MPI_Bcast(at, piece, mpiType(dtype), root, comm), "MPI_Bcast");
    else
      check(MPI_Ibcast(at, piece, mpiType(dtype), root, comm,
                       &requests.emplace_back()),
            "MPI_Ibcast");
  });
  complete(requests, "MPI_Ibcast");
}

void MpiCommunicator::barrier() {
  Watched watched(*watchdog, "barrier");
  check(MPI_Barrier(comm), "MPI_Barrier");
}

} // namespace loom::rt::mpi

/// The plugin's entry point: initialises MPI if needed and returns the
/// communicator of all ranks (owned by the caller). Throws Error.
extern "C" LOOM_RT_ABI_EXPORT loom::rt::Communicator *
loom_mpi_plugin_connect(int abiVersion, const loom::rt::WorldOptions *options) {
  loom::rt::checkPluginAbi(abiVersion, loom::rt::kPluginAbiVersion,
                           "libLoomMpi.so");
  return new loom::rt::mpi::MpiCommunicator(*options);
}
