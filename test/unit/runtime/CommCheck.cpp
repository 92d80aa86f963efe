//===- CommCheck.cpp - Collective conformance under a real MPI job -*- C++
//-*-===//
//
// Not a test binary itself: MpiCommTest runs it under mpiexec with several
// ranks. Every rank checks the loom_rt_* collectives (through the MPI
// communicator made current, as the Trainer does) for every dtype and
// reduce op, on inputs whose results are exactly predictable (small
// integers), and prints "rank R: N checks passed" or the first failure.
// Then two threads at once run all-reduces of different values: one on the
// communicator, as the communication thread of CO2's outer rounds does,
// the other on a duplicate (Communicator::duplicate), as CO2's background
// checkpoint writers do. Neither may see the other's values.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/World.h"
#include "loom/runtime/abi.h"

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using namespace loom::rt;

namespace {

std::atomic<int> checks{0};

template <typename T>
bool expect(const std::vector<T> &actual, const std::vector<T> &expected,
            const std::string &what, int rank) {
  ++checks;
  for (size_t i = 0; i < expected.size(); ++i)
    if (actual[i] != expected[i]) {
      std::printf("rank %d: FAIL %s: element %zu is %g, expected %g\n", rank,
                  what.c_str(), i, double(actual[i]), double(expected[i]));
      return false;
    }
  return true;
}

template <typename T>
bool checkType(int32_t dtype, const char *name, int rank, int size) {
  for (int64_t count : {int64_t(0), int64_t(1), int64_t(1000)}) {
    std::string tag = std::string(name) + " x" + std::to_string(count);
    for (int32_t op : {LOOM_SUM, LOOM_MEAN, LOOM_MAX}) {
      std::vector<T> buf(count), want(count);
      for (int64_t i = 0; i < count; ++i) {
        buf[i] = T((rank + 1) * (i % 50 + 1));
        T sum = T((i % 50 + 1) * size * (size + 1) / 2);
        want[i] = op == LOOM_SUM    ? sum
                  : op == LOOM_MEAN ? T(sum / T(size))
                                    : T((i % 50 + 1) * size);
      }
      loom_rt_all_reduce(0, buf.data(), count, dtype, op);
      if (!expect(buf, want, "all_reduce " + tag + " op " + std::to_string(op),
                  rank))
        return false;

      std::vector<T> send(count * size), slice(count), sliceWant(count);
      for (int64_t j = 0; j < count * size; ++j)
        send[j] = T((rank + 1) * (j % 50 + 1));
      for (int64_t i = 0; i < count; ++i) {
        int64_t j = rank * count + i;
        T sum = T((j % 50 + 1) * size * (size + 1) / 2);
        sliceWant[i] = op == LOOM_SUM    ? sum
                       : op == LOOM_MEAN ? T(sum / T(size))
                                         : T((j % 50 + 1) * size);
      }
      loom_rt_reduce_scatter(0, send.data(), slice.data(), count, dtype, op);
      if (!expect(slice, sliceWant,
                  "reduce_scatter " + tag + " op " + std::to_string(op), rank))
        return false;
      // The same on the communication thread (CO2's sharded rounds).
      std::vector<T> later(count);
      loom_rt_wait(loom_rt_reduce_scatter_start(0, send.data(), later.data(),
                                                count, dtype, op));
      if (!expect(later, sliceWant,
                  "reduce_scatter_start " + tag + " op " + std::to_string(op),
                  rank))
        return false;
    }
    std::vector<T> mine(count), all(count * size), allWant(count * size);
    for (int64_t i = 0; i < count; ++i)
      mine[i] = T(rank * 100 + i % 100);
    for (int r = 0; r < size; ++r)
      for (int64_t i = 0; i < count; ++i)
        allWant[r * count + i] = T(r * 100 + i % 100);
    loom_rt_all_gather(0, mine.data(), all.data(), count, dtype);
    if (!expect(all, allWant, "all_gather " + tag, rank))
      return false;
    // In place: this rank's part already sits in its slice.
    std::vector<T> inPlace(count * size, T(-1));
    for (int64_t i = 0; i < count; ++i)
      inPlace[rank * count + i] = mine[i];
    loom_rt_all_gather(0, inPlace.data() + rank * count, inPlace.data(), count,
                       dtype);
    if (!expect(inPlace, allWant, "in-place all_gather " + tag, rank))
      return false;

    std::vector<T> cast(count, T(rank)), castWant(count, T(size - 1));
    loom_rt_broadcast(0, cast.data(), count, dtype, size - 1);
    if (!expect(cast, castWant, "broadcast " + tag, rank))
      return false;
  }
  return true;
}

/// All-reduces on `comm` of values that differ with `salt`, as exact
/// sums, from a thread other than the one that created `comm`.
bool checkConcurrent(Communicator &comm, int64_t salt, const char *what,
                     int rank, int size) {
  for (int round = 0; round < 200; ++round) {
    std::vector<int64_t> buf(257), want(257);
    for (int64_t i = 0; i < 257; ++i) {
      buf[i] = int64_t(rank + 1) * salt + round * 7 + i;
      want[i] = int64_t(size) * (size + 1) / 2 * salt +
                int64_t(size) * (round * 7 + i);
    }
    comm.allReduce(buf.data(), 257, DType::I64, ReduceOp::Sum);
    if (!expect(buf, want,
                std::string("all_reduce ") + what + ", round " +
                    std::to_string(round),
                rank))
      return false;
  }
  return true;
}

} // namespace

int main() {
  setToolName("LoomCommCheck");
  try {
    std::unique_ptr<Communicator> comm =
        connectWorld(detectJob(), WorldOptions());
    ScopedCurrentCommunicator current(*comm);
    int rank = comm->rank(), size = comm->size();
    bool ok = checkType<float>(LOOM_F32, "f32", rank, size) &&
              checkType<double>(LOOM_F64, "f64", rank, size) &&
              checkType<int32_t>(LOOM_I32, "i32", rank, size) &&
              checkType<int64_t>(LOOM_I64, "i64", rank, size);
    double metric[2] = {double(rank), 1};
    comm->allReduceSum(metric, 2);
    ok = ok && expect(std::vector<double>(metric, metric + 2),
                      {double(size * (size - 1) / 2), double(size)},
                      "allReduceSum", rank);
    std::unique_ptr<Communicator> dup = comm->duplicate();
    if (!dup) {
      std::printf("rank %d: FAIL duplicate() returned none\n", rank);
      return 1;
    }
    std::atomic<bool> rounds{false}, writers{false};
    std::thread roundThread([&] {
      rounds =
          checkConcurrent(*comm, 1000003, "on the communicator", rank, size);
    });
    std::thread writerThread([&] {
      writers = checkConcurrent(*dup, 7000001, "on its duplicate", rank, size);
    });
    roundThread.join();
    writerThread.join();
    ok = ok && rounds && writers;
    comm->barrier();
    if (ok)
      std::printf("rank %d of %d (%s): %d checks passed\n", rank, size,
                  comm->backend(), checks.load());
    std::fflush(stdout);
    return ok ? 0 : 1;
  } catch (const std::exception &e) {
    std::printf("LoomCommCheck: error: %s\n", e.what());
    return 1;
  }
}
