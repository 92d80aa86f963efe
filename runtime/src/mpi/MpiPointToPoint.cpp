//===- MpiPointToPoint.cpp - Pipeline transfers over MPI ------------------===//
//
// Communicator::send and recv of the MPI backend: the transfers between
// neighbouring pipeline stages (comm.send / comm.recv, abi.h's
// loom_rt_send / loom_rt_recv).
//
//===----------------------------------------------------------------------===//
#include "mpi/MpiCommunicator.h"

#include "loom/runtime/DType.h"

namespace loom::rt::mpi {

namespace {

/// Pipeline transfers have a tag of their own: the rank-ordered sums'
/// exchanges are point-to-point messages on the same communicator.
constexpr int kTransferTag = 0x10ad;

} // namespace

void MpiCommunicator::send(const void *buf, int64_t count, DType dtype,
                           int peer) {
  // A copy sent without waiting: the stages of a 1F1B schedule send their
  // next activation while the peer sends them a gradient, which with
  // waiting (rendezvous-sized) sends would deadlock.
  int n = intCount(count, "send");
  const char *from = static_cast<const char *>(buf);
  PendingSend &pending = pendingSends.emplace_back();
  pending.data.assign(from, from + count * int64_t(dtypeSize(dtype)));
  check(MPI_Isend(pending.data.data(), n, mpiType(dtype), peer, kTransferTag,
                  comm, &pending.request),
        "MPI_Isend");
  retireSends(/*all=*/false);
}

void MpiCommunicator::recv(void *buf, int64_t count, DType dtype, int peer) {
  Watched watched(*watchdog, "recv", count, dtype);
  std::vector<MPI_Request> requests(1);
  check(MPI_Irecv(buf, intCount(count, "recv"), mpiType(dtype), peer,
                  kTransferTag, comm, &requests[0]),
        "MPI_Irecv");
  complete(requests, "MPI_Irecv", std::chrono::steady_clock::now(),
           Polling::Prompt);
  retireSends(/*all=*/false);
}

void MpiCommunicator::retireSends(bool all) {
  while (!pendingSends.empty()) {
    int done = 1;
    MPI_Request &request = pendingSends.front().request;
    if (all)
      check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
    else
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!done)
      return;
    pendingSends.pop_front();
  }
}

} // namespace loom::rt::mpi
