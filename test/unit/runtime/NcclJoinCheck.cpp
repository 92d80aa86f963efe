//===- NcclJoinCheck.cpp - Ranks making their NCCL communicator -*- C++ -*-===//
//
// Not a test binary itself: CudaNcclTest (NcclJoin.*) runs it under
// mpiexec. Every rank joins the ranks' NCCL communicator through the
// plugin's joinNcclRanks over the real MPI communicator, with stand-in GPUs
// (distinct UUIDs unless the scenario says otherwise) and the scripted NCCL
// of FakeNccl.c ($LOOM_NCCL_LIBRARY), in the scenario $LOOM_TEST_NCCL_JOIN
// names:
//   ok                  every rank joins;
//   shared-gpu          ranks 0 and 1 report the same GPU;
//   no-nccl-on-rank-1   rank 1 cannot load NCCL;
//   init-fails-on-rank-1  rank 1's NCCL fails while joining;
//   init-hangs-on-rank-0  rank 0's NCCL never finishes joining.
// Each rank prints one line: "rank R: joined", "rank R: error: MESSAGE" (the
// one message of a failed join) or "rank R: stopped" (another rank
// reported), then its NCCL calls: "rank R: inits I aborts A blocking B".
//
//===----------------------------------------------------------------------===//

#include "cuda/NcclJoin.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/World.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>

using namespace loom::rt;
using namespace loom::rt::cuda;

namespace {

struct FakeNcclCounts {
  int inits, polls, finalizes, destroys, aborts, lastBlocking, collectives;
};

} // namespace

int main() {
  setToolName("LoomNcclJoinCheck");
  const char *scenarioText = std::getenv("LOOM_TEST_NCCL_JOIN");
  const std::string scenario = scenarioText ? scenarioText : "ok";
  const char *fakePath = std::getenv("LOOM_NCCL_LIBRARY");
  void *fake = fakePath ? ::dlopen(fakePath, RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (!fake) {
    std::printf("LoomNcclJoinCheck: LOOM_NCCL_LIBRARY must name FakeNccl\n");
    return 2;
  }
  auto script = reinterpret_cast<void (*)(ncclResult_t, int, ncclResult_t)>(
      ::dlsym(fake, "fakeNcclScript"));
  auto counts = reinterpret_cast<void (*)(FakeNcclCounts *)>(
      ::dlsym(fake, "fakeNcclCounts"));
  auto reset = reinterpret_cast<void (*)()>(::dlsym(fake, "fakeNcclReset"));
  reset();

  WorldOptions options;
  if (const char *timeout = std::getenv("LOOM_TEST_COLLECTIVE_TIMEOUT"))
    options.collectiveTimeout = std::atof(timeout);
  std::unique_ptr<Communicator> host;
  try {
    host = connectWorld(detectJob(), options);
  } catch (const std::exception &e) {
    std::printf("LoomNcclJoinCheck: %s\n", e.what());
    return 2;
  }
  const int rank = host->rank();

  // A blocking init answers at once; the scripted ones are nonblocking.
  script(ncclInProgress, 3, ncclSuccess);
  if (scenario == "no-nccl-on-rank-1" && rank == 1)
    ::setenv("LOOM_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  if (scenario == "init-fails-on-rank-1" && rank == 1)
    script(ncclInProgress, 2, ncclRemoteError);
  if (scenario == "init-hangs-on-rank-0" && rank == 0)
    script(ncclInProgress, -1, ncclSuccess);

  NcclJoinDevice device;
  device.uuid = [&] {
    CUuuid id;
    std::memset(&id, 0x42, sizeof(id));
    id.bytes[15] =
        static_cast<char>(scenario == "shared-gpu" && rank == 1 ? 0 : rank);
    return id;
  };
  device.bind = [] {};

  std::string outcome;
  try {
    const NcclLibrary *nccl = nullptr;
    ncclComm_t comm = joinNcclRanks(*host, device, nccl);
    outcome = comm && nccl ? "joined" : "no communicator";
  } catch (const SilentError &) {
    outcome = "stopped";
  } catch (const std::exception &e) {
    outcome = std::string("error: ") + e.what();
  }
  FakeNcclCounts c;
  counts(&c);
  std::printf("rank %d: %s\nrank %d: inits %d aborts %d blocking %d\n", rank,
              outcome.c_str(), rank, c.inits, c.aborts, c.lastBlocking);
  std::fflush(stdout);
  // The ranks end together: none leaves MPI while another is still in it.
  host->barrier();
  return 0;
}
