//===- CheckedCommunicator.cpp - Ranks compare each collective first -*- C++
//-*-===//
//
// The description travels as six int64 values, so the check is one
// all-gather of a fixed size that matches on every rank whatever the ranks
// were about to issue.
//
//===----------------------------------------------------------------------===//

#include "CheckedCommunicator.h"
#include "loom/runtime/CurrentCommunicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/FlightRecord.h"

#include <chrono>
#include <cstdlib>
#include <thread>
#include <tuple>

namespace loom::rt {

namespace {

static_assert(sizeof(CollectiveCall) == 6 * sizeof(int64_t),
              "CollectiveCall is exchanged as six int64 values");

const char *kindName(int64_t kind) {
  switch (kind) {
  case CollectiveCall::AllReduce:
    return "all_reduce";
  case CollectiveCall::ReduceScatter:
    return "reduce_scatter";
  case CollectiveCall::AllGather:
    return "all_gather";
  case CollectiveCall::Broadcast:
    return "broadcast";
  case CollectiveCall::Barrier:
    return "barrier";
  default:
    return nullptr;
  }
}

/// "f32", or the number when it names no dtype (a peer's corrupt call).
std::string dtypeText(int64_t dtype) {
  if (dtype >= static_cast<int64_t>(DType::F32) &&
      dtype <= static_cast<int64_t>(DType::I64))
    return dtypeName(static_cast<DType>(dtype));
  return "dtype " + std::to_string(dtype);
}

std::string opText(int64_t op) {
  if (op >= static_cast<int64_t>(ReduceOp::Sum) &&
      op <= static_cast<int64_t>(ReduceOp::Max))
    return reduceOpName(static_cast<ReduceOp>(op));
  return "op " + std::to_string(op);
}

} // namespace

bool CollectiveCall::operator==(const CollectiveCall &other) const {
  return std::tie(seq, kind, count, dtype, op, root) ==
         std::tie(other.seq, other.kind, other.count, other.dtype, other.op,
                  other.root);
}

std::string describeCall(const CollectiveCall &call) {
  const char *name = kindName(call.kind);
  if (!name)
    return "an unknown collective (kind " + std::to_string(call.kind) + ")";
  std::string text = name;
  if (call.kind == CollectiveCall::Barrier)
    return text;
  text += " (" + std::to_string(call.count) + " " + dtypeText(call.dtype);
  if (call.op >= 0)
    text += ", " + opText(call.op);
  if (call.root >= 0)
    text += " from rank " + std::to_string(call.root);
  return text + ")";
}

std::string describeCallMismatch(const std::vector<CollectiveCall> &byRank) {
  // The ranks of each distinct call, in the order of their lowest rank.
  std::vector<std::pair<CollectiveCall, std::vector<int>>> groups;
  bool sameNumber = true;
  for (size_t rank = 0; rank < byRank.size(); ++rank) {
    const CollectiveCall &call = byRank[rank];
    sameNumber = sameNumber && call.seq == byRank[0].seq;
    auto group = groups.begin();
    while (group != groups.end() && !(group->first == call))
      ++group;
    if (group == groups.end())
      groups.push_back({call, {static_cast<int>(rank)}});
    else
      group->second.push_back(static_cast<int>(rank));
  }
  if (groups.size() <= 1)
    return "";
  // Every rank numbers its checks alike, so the numbers differ only when
  // the ranks check differently (another runtime): then each is shown.
  std::string text = sameNumber
                         ? "the ranks issued different collectives as their #" +
                               std::to_string(byRank[0].seq) + ": "
                         : "the ranks issued different collectives: ";
  for (size_t i = 0; i < groups.size(); ++i) {
    text += (i ? "; " : "") + describeRanks(groups[i].second) + " " +
            describeCall(groups[i].first);
    if (!sameNumber)
      text += " as #" + std::to_string(groups[i].first.seq);
  }
  return text + ". Every rank must issue the same collectives in the same "
                "order; stopping the job (--check-collectives)";
}

void CheckedCommunicator::check(CollectiveCall call) {
  call.seq = ++issued;
  std::vector<CollectiveCall> all(size());
  // Blocking on either thread, so that checks match across ranks whatever
  // thread each rank checks on (the collectives being checked may not).
  inner->allGatherBlocking(&call, all.data(), 6, DType::I64);
  std::string mismatch = describeCallMismatch(all);
  if (mismatch.empty())
    return;
  // Every rank knows; rank 0 says it and stops the job. Should the launcher
  // not stop the others, each stops itself a little later, still silent.
  if (rank() == 0)
    abortJob(mismatch, inner.get());
  std::this_thread::sleep_for(std::chrono::seconds(10));
  inner->abort(1);
}

void CheckedCommunicator::allReduce(void *buf, int64_t count, DType dtype,
                                    ReduceOp op) {
  check({0, CollectiveCall::AllReduce, count, static_cast<int64_t>(dtype),
         static_cast<int64_t>(op), -1});
  inner->allReduce(buf, count, dtype, op);
}

void CheckedCommunicator::reduceScatter(const void *send, void *recv,
                                        int64_t count, DType dtype,
                                        ReduceOp op) {
  check({0, CollectiveCall::ReduceScatter, count, static_cast<int64_t>(dtype),
         static_cast<int64_t>(op), -1});
  inner->reduceScatter(send, recv, count, dtype, op);
}

void CheckedCommunicator::allGather(const void *send, void *recv, int64_t count,
                                    DType dtype) {
  check({0, CollectiveCall::AllGather, count, static_cast<int64_t>(dtype), -1,
         -1});
  inner->allGather(send, recv, count, dtype);
}

void CheckedCommunicator::allGatherBlocking(const void *send, void *recv,
                                            int64_t count, DType dtype) {
  check({0, CollectiveCall::AllGather, count, static_cast<int64_t>(dtype), -1,
         -1});
  inner->allGatherBlocking(send, recv, count, dtype);
}

void CheckedCommunicator::broadcast(void *buf, int64_t count, DType dtype,
                                    int root) {
  check({0, CollectiveCall::Broadcast, count, static_cast<int64_t>(dtype), -1,
         root});
  inner->broadcast(buf, count, dtype, root);
}

void CheckedCommunicator::barrier() {
  check({0, CollectiveCall::Barrier, 0, -1, -1, -1});
  inner->barrier();
}

void CheckedCommunicator::abort(int status) {
  inner->abort(status);
  std::_Exit(status); // abort() does not return; this tells the compiler so
}

std::unique_ptr<Communicator>
checkEveryCollective(std::unique_ptr<Communicator> comm) {
  if (comm->size() <= 1)
    return comm;
  return std::make_unique<CheckedCommunicator>(std::move(comm));
}

} // namespace loom::rt
