//===- CheckedCommunicatorTest.cpp - --check-collectives ------*- C++ -*-===//
//
// The check that ranks issue the same collectives: the description of a
// mismatch, collectives that match passing through, and rank 0 stopping
// the job before a mismatched collective runs.
//
//===----------------------------------------------------------------------===//

#include "comm/CheckedCommunicator.h"
#include "TestUtil.h"
#include "loom/runtime/Error.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

using namespace loom::rt;

namespace {

/// The inner communicator of a CheckedCommunicator under test: rank `me` of
/// `ranks`, whose peers described `peers` in the check (or, unset, what
/// this rank described), recording what reaches it.
class ScriptedPeers final : public Communicator {
public:
  ScriptedPeers(int ranks, int me, std::vector<std::string> *calls)
      : ranks(ranks), me(me), calls(calls) {}
  int rank() const override { return me; }
  int size() const override { return ranks; }
  const char *backend() const override { return "scripted"; }
  void allReduce(void *, int64_t count, DType dtype, ReduceOp op) override {
    calls->push_back("all_reduce " + std::to_string(count) + " " +
                     dtypeName(dtype) + " " + reduceOpName(op));
  }
  void reduceScatter(const void *, void *, int64_t count, DType,
                     ReduceOp) override {
    calls->push_back("reduce_scatter " + std::to_string(count));
  }
  void allGather(const void *send, void *recv, int64_t count,
                 DType dtype) override {
    calls->push_back("all_gather " + std::to_string(count) + " " +
                     dtypeName(dtype));
    auto *all = static_cast<CollectiveCall *>(recv);
    for (int rank = 0; rank < ranks; ++rank)
      all[rank] = *static_cast<const CollectiveCall *>(send);
    if (peer) // every other rank issued `peer` instead
      for (int rank = 0; rank < ranks; ++rank)
        if (rank != me) {
          all[rank] = *peer;
          all[rank].seq = all[me].seq;
        }
  }
  void broadcast(void *, int64_t count, DType, int root) override {
    calls->push_back("broadcast " + std::to_string(count) + " from " +
                     std::to_string(root));
  }
  void barrier() override { calls->push_back("barrier"); }
  [[noreturn]] void abort(int status) override { _exit(40 + status); }

  int ranks, me;
  std::vector<std::string> *calls;
  std::optional<CollectiveCall> peer;
};

CollectiveCall call(int64_t seq, int64_t kind, int64_t count = 0,
                    DType dtype = DType::F32, int64_t op = -1,
                    int64_t root = -1) {
  return {seq, kind, count, static_cast<int64_t>(dtype), op, root};
}

} // namespace

TEST(CheckedCommunicator, DescribesWhatDiffersBetweenRanks) {
  CollectiveCall sum = call(15, CollectiveCall::AllReduce, 36, DType::F64,
                            static_cast<int64_t>(ReduceOp::Sum));
  CollectiveCall barrier = {15, CollectiveCall::Barrier, 0, -1, -1, -1};
  EXPECT_EQ(describeCallMismatch({sum, sum, sum}), "");
  EXPECT_EQ(describeCallMismatch({sum, barrier}),
            "the ranks issued different collectives as their #15: rank 0 "
            "all_reduce (36 f64, sum); rank 1 barrier. Every rank must issue "
            "the same collectives in the same order; stopping the job "
            "(--check-collectives)");
  CollectiveCall twice = sum;
  twice.count = 72;
  EXPECT_EQ(
      describeCallMismatch({sum, twice, sum})
          .rfind("the ranks issued different collectives as their #15: ranks "
                 "0, 2 all_reduce (36 f64, sum); rank 1 all_reduce (72 f64, "
                 "sum). Every rank",
                 0),
      0u);
  EXPECT_EQ(
      describeCall(call(3, CollectiveCall::Broadcast, 4, DType::I64, -1, 0)),
      "broadcast (4 i64 from rank 0)");
  EXPECT_EQ(describeCall(call(3, CollectiveCall::AllGather, 8)),
            "all_gather (8 f32)");
  EXPECT_EQ(describeCall({3, 99, 1, 77, -1, -1}),
            "an unknown collective (kind 99)");
  EXPECT_EQ(describeCall({3, CollectiveCall::ReduceScatter, 2, 77, 9, -1}),
            "reduce_scatter (2 dtype 77, op 9)");
  CollectiveCall later = sum;
  later.seq = 16;
  EXPECT_NE(describeCallMismatch({sum, later})
                .find("the ranks issued different collectives: rank 0 "
                      "all_reduce (36 f64, sum) as #15; rank 1 all_reduce (36 "
                      "f64, sum) as #16."),
            std::string::npos);
}

TEST(CheckedCommunicator, CollectivesThatMatchPassThroughInOrder) {
  std::vector<std::string> calls;
  auto inner = std::make_unique<ScriptedPeers>(3, 1, &calls);
  CheckedCommunicator comm(std::move(inner));
  EXPECT_EQ(comm.rank(), 1);
  EXPECT_EQ(comm.size(), 3);
  EXPECT_STREQ(comm.backend(), "scripted");
  float grad[5] = {0};
  comm.allReduce(grad, 5, DType::F32, ReduceOp::Mean);
  comm.broadcast(grad, 2, DType::F32, 0);
  comm.barrier();
  EXPECT_EQ(comm.checked(), 3);
  std::vector<std::string> expected = {
      "all_gather 6 i64",   "all_reduce 5 f32 mean", "all_gather 6 i64",
      "broadcast 2 from 0", "all_gather 6 i64",      "barrier"};
  EXPECT_EQ(calls, expected);
  // One rank alone has nothing to compare with: nothing is wrapped.
  std::unique_ptr<Communicator> alone =
      checkEveryCollective(std::make_unique<LocalCommunicator>());
  EXPECT_STREQ(alone->backend(), "local");
  EXPECT_EQ(dynamic_cast<CheckedCommunicator *>(alone.get()), nullptr);
}

/// Rank 0 of two: a barrier both issue, then an all-reduce of 5 floats as
/// the second collective while rank 1 issues a barrier.
void allReduceAgainstABarrier() {
  std::vector<std::string> calls;
  auto inner = std::make_unique<ScriptedPeers>(2, 0, &calls);
  ScriptedPeers *peers = inner.get();
  CheckedCommunicator comm(std::move(inner));
  comm.barrier();
  peers->peer = CollectiveCall{0, CollectiveCall::Barrier, 0, -1, -1, -1};
  float grad[5] = {0};
  comm.allReduce(grad, 5, DType::F32, ReduceOp::Sum);
  std::fprintf(stderr, "the all-reduce ran\n");
}

TEST(CheckedCommunicatorDeathTest, RankZeroStopsTheJobBeforeAMismatch) {
  // Rank 0 says so and stops the job (the scripted abort exits 41) without
  // issuing the all-reduce.
  setToolName("loom-run");
  EXPECT_EXIT(allReduceAgainstABarrier(), ::testing::ExitedWithCode(41),
              "loom-run: error: rank 0: the ranks issued different "
              "collectives as their #2: rank 0 all_reduce \\(5 f32, sum\\); "
              "rank 1 barrier\\.");
}
