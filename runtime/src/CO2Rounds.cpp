//===- CO2Rounds.cpp - CO2's outer rounds, run by the trainer -------------===//
#include "CO2Rounds.h"

#include "loom/runtime/Error.h"
#include "loom/runtime/abi.h"

#include <cstring>

namespace loom::rt {

CO2Rounds::CO2Rounds(Artifact &artifact, Communicator &comm)
    : artifact(artifact), comm(comm), tau(artifact.manifest().co2.localSteps),
      outer(artifact.entry("outer_step")) {
  for (Tensor *p : artifact.params()) {
    // Only the parameters the outer step updates travel (its inputs say
    // which); manifest order on every rank.
    Tensor *mean = artifact.findTensor("co2.mean:" + p->name());
    if (!mean)
      continue;
    params.push_back(p);
    means.push_back(mean);
    elements += p->numElements();
  }
  if (params.empty())
    fail("%s: outer_step takes no co2.mean:<param> input",
         artifact.manifest().source.c_str());
  roundBuffer.resize(static_cast<size_t>(elements) *
                     dtypeSize(params.front()->dtype()));
}

CO2Rounds::~CO2Rounds() {
  try {
    finish();
  } catch (...) {
  }
}

void CO2Rounds::start() {
  artifact.tensor("co2.round").set(0, -1);
  outer.call();
}

void CO2Rounds::finish() {
  if (inFlight)
    loom_rt_wait(inFlight);
  inFlight = 0;
}

double CO2Rounds::outerStep(int64_t step, double lossSum) {
  const int64_t round = step / tau - 1;
  // 1. The previous round's mean, into outer_step's inputs.
  if (inFlight) {
    loom_rt_wait(inFlight);
    inFlight = 0;
    const char *from = roundBuffer.data();
    for (Tensor *mean : means) {
      std::memcpy(mean->data(), from, mean->byteSize());
      from += mean->byteSize();
    }
  }
  // Nothing is in flight now, so a synchronous reduction cannot cross the
  // communication thread's: the round's loss over all ranks.
  double loss[2] = {lossSum, static_cast<double>(tau)};
  comm.allReduceSum(loss, 2);
  // 2. This round's parameters, averaged while the next round computes.
  char *to = roundBuffer.data();
  for (Tensor *p : params) {
    std::memcpy(to, p->data(), p->byteSize());
    to += p->byteSize();
  }
  inFlight = loom_rt_all_reduce_start(
      0, roundBuffer.data(), elements,
      static_cast<int32_t>(params.front()->dtype()), LOOM_MEAN);
  // 3. The outer update (round 0 has no mean yet; outer_step knows).
  artifact.tensor("co2.round").set(0, static_cast<double>(round));
  outer.call();
  return loss[0] / loss[1];
}

} // namespace loom::rt
