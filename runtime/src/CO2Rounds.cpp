//===- CO2Rounds.cpp - CO2's outer rounds, run by the trainer -------------===//
#include "CO2Rounds.h"

#include "loom/runtime/Error.h"
#include "loom/runtime/abi.h"

#include <cmath>
#include <cstring>

namespace loom::rt {

CO2Rounds::CO2Rounds(Artifact &artifact)
    : artifact(artifact), tau(artifact.manifest().co2.localSteps),
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
  roundBuffer.resize(static_cast<size_t>(elements + 1) *
                     dtypeSize(params.front()->dtype()));
}

CO2Rounds::~CO2Rounds() {
  try {
    (void)finish();
  } catch (...) {
  }
}

void CO2Rounds::start() {
  artifact.tensor("co2.round").set(0, -1);
  outer.call();
}

namespace {

/// The loss slot after the parameters, in the parameters' dtype.
double lossAt(const char *slot, DType dtype) {
  if (dtype == DType::F64)
    return *reinterpret_cast<const double *>(slot);
  return *reinterpret_cast<const float *>(slot);
}

void setLossAt(char *slot, DType dtype, double value) {
  if (dtype == DType::F64)
    *reinterpret_cast<double *>(slot) = value;
  else
    *reinterpret_cast<float *>(slot) = static_cast<float>(value);
}

} // namespace

double CO2Rounds::finish() {
  if (!inFlight)
    return NAN;
  loom_rt_wait(inFlight);
  inFlight = 0;
  const DType dtype = params.front()->dtype();
  return lossAt(roundBuffer.data() + elements * dtypeSize(dtype), dtype);
}

double CO2Rounds::outerStep(int64_t step, double lossSum) {
  const int64_t round = step / tau - 1;
  const DType dtype = params.front()->dtype();
  // 1. The previous round's mean, into outer_step's inputs.
  const bool hadRound = inFlight != 0;
  double previousLoss = finish();
  if (hadRound) {
    const char *from = roundBuffer.data();
    for (Tensor *mean : means) {
      std::memcpy(mean->data(), from, mean->byteSize());
      from += mean->byteSize();
    }
  }
  // 2. This round's parameters and mean loss, averaged over the ranks
  // while the next round computes.
  char *to = roundBuffer.data();
  for (Tensor *p : params) {
    std::memcpy(to, p->data(), p->byteSize());
    to += p->byteSize();
  }
  setLossAt(to, dtype, lossSum / static_cast<double>(tau));
  inFlight = loom_rt_all_reduce_start(0, roundBuffer.data(), elements + 1,
                                      static_cast<int32_t>(dtype), LOOM_MEAN);
  // 3. The outer update (round 0 has no mean yet; outer_step knows).
  artifact.tensor("co2.round").set(0, static_cast<double>(round));
  outer.call();
  return previousLoss;
}

} // namespace loom::rt
