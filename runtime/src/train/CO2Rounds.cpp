//===- CO2Rounds.cpp - CO2's outer rounds, run by the trainer -------------===//
#include "train/CO2Rounds.h"

#include "compress/Compression.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/abi.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <utility>

namespace loom::rt {

namespace {

/// The flat round buffer: the parameters, the loss slot, and for the
/// sharded form zero padding up to ranks x shard elements.
int64_t roundElements(const Manifest &manifest, int64_t paramElements,
                      int ranks) {
  if (!manifest.co2.sharded)
    return paramElements + 1;
  return manifest.co2.shardElements * ranks;
}

Tensor &needTensor(Artifact &artifact, const std::string &name,
                   const char *entry) {
  Tensor *tensor = artifact.findTensor(name);
  if (!tensor)
    fail("%s: entry %s has no argument '%s'",
         artifact.manifest().source.c_str(), entry, name.c_str());
  return *tensor;
}

/// The parameters a CO2 artifact's outer step updates, in flat order:
/// sharded, the manifest's list; replicated, those with a co2.mean input.
std::vector<Tensor *> outerParams(Artifact &artifact,
                                  std::vector<Tensor *> &means) {
  const Manifest &manifest = artifact.manifest();
  std::vector<Tensor *> params;
  if (manifest.co2.sharded) {
    for (const std::string &name : manifest.co2.params) {
      Tensor *p = artifact.findTensor(name);
      if (!p || p->role() != ArgRole::Param)
        fail("%s: co2.params names '%s', which is not a param",
             manifest.source.c_str(), name.c_str());
      params.push_back(p);
    }
    return params;
  }
  for (Tensor *p : artifact.params()) {
    // Only the parameters the outer step updates travel (its inputs say
    // which); manifest order on every rank.
    Tensor *mean = artifact.findTensor("co2.mean:" + p->name());
    if (!mean)
      continue;
    params.push_back(p);
    means.push_back(mean);
  }
  if (params.empty())
    fail("%s: outer_step takes no co2.mean:<param> input",
         manifest.source.c_str());
  return params;
}

/// Compressed outer round: each parameter's slot in the manifest's
/// compression (-1 if not listed), and `params` (with `means`) reordered
/// so that the listed ones come first, in their manifest order.
std::vector<int64_t> compressionSlots(const Manifest &manifest,
                                      std::vector<Tensor *> &params,
                                      std::vector<Tensor *> &means) {
  const CompressionSpec &spec = manifest.compression;
  std::vector<int64_t> slotOf(params.size(), -1);
  for (size_t i = 0; i < params.size(); ++i)
    for (size_t s = 0; s < spec.slots.size(); ++s)
      if (spec.slots[s].param == params[i]->name())
        slotOf[i] = int64_t(s);
  std::vector<size_t> order(params.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return (slotOf[a] < 0) < (slotOf[b] < 0);
  });
  std::vector<Tensor *> p, m;
  std::vector<int64_t> slots;
  for (size_t i : order) {
    p.push_back(params[i]);
    m.push_back(means[i]);
    slots.push_back(slotOf[i]);
  }
  params = std::move(p);
  means = std::move(m);
  return slots;
}

int64_t countElements(const std::vector<Tensor *> &tensors) {
  int64_t n = 0;
  for (const Tensor *t : tensors)
    n += t->numElements();
  return n;
}

/// The shard layout loomc recorded (co2.layout; parsing checked that the
/// slices follow each other) must fit this job and cover the parameters
/// co2.params names: the trainer follows it rather than working one out.
void checkShardLayout(const Manifest &manifest, int64_t paramElements,
                      int ranks) {
  const CO2Spec &co2 = manifest.co2;
  if (co2.layout.size() != static_cast<size_t>(ranks))
    fail("%s: co2.layout has slices for %zu ranks but the job has %d "
         "(compiled for another rank count?)",
         manifest.source.c_str(), co2.layout.size(), ranks);
  if (co2.paramElements() != paramElements)
    fail("%s: co2.layout covers %lld parameter elements, but the params "
         "of co2.params have %lld",
         manifest.source.c_str(), static_cast<long long>(co2.paramElements()),
         static_cast<long long>(paramElements));
}

} // namespace

CO2Rounds::CO2Rounds(Artifact &artifact, Communicator &comm)
    : artifact(artifact), comm(comm), tau(artifact.manifest().co2.localSteps),
      isSharded(artifact.manifest().co2.sharded), rank(comm.rank()),
      ranks(comm.size()),
      outer(artifact.entry(isSharded ? "outer_shard" : "outer_step")),
      dtype(DType::F32), params(outerParams(artifact, means)),
      elements(countElements(params)),
      roundBuffer("co2.round_buffer", ArgRole::State,
                  {roundElements(artifact.manifest(), elements, ranks)},
                  params.front()->dtype()) {
  const Manifest &manifest = artifact.manifest();
  dtype = params.front()->dtype();
  for (const Tensor *p : params)
    if (p->dtype() != dtype)
      fail("%s: CO2 needs one dtype for every parameter it averages",
           manifest.source.c_str());
  if (!isSharded) {
    if (manifest.compression.enabled())
      setUpCompression();
    return;
  }
  if (manifest.compression.enabled())
    fail("%s: a sharded CO2 outer round is not compressed (loomc refuses "
         "--co2=sharded=1 with --compress)",
         manifest.source.c_str());
  shardElements = manifest.co2.shardElements;
  checkShardLayout(manifest, elements, ranks);
  shardMean = &needTensor(artifact, "co2.shard_mean", "outer_shard");
  shardOut = &needTensor(artifact, "co2.shard_out", "outer_shard");
  shardPrevAnchor =
      &needTensor(artifact, "co2.shard.co2_prev_anchor", "outer_shard");
  for (Tensor *t : {shardMean, shardOut, shardPrevAnchor})
    if (t->numElements() != shardElements || t->dtype() != dtype)
      fail("%s: outer_shard's %s must have co2.shard_elements elements of "
           "the parameters' dtype",
           manifest.source.c_str(), t->name().c_str());
}

void CO2Rounds::setUpCompression() {
  const Manifest &manifest = artifact.manifest();
  if (dtype != DType::F32)
    fail("%s: a compressed outer round averages f32 parameters",
         manifest.source.c_str());
  slots = compressionSlots(manifest, params, means);
  for (size_t i = 0; i < params.size() && slots[i] >= 0; ++i)
    compressedElements += params[i]->numElements();
  anchor = std::make_unique<Tensor>("co2.compress_anchor", ArgRole::State,
                                    Shape{compressedElements}, DType::F32);
  sentAnchor.assign(size_t(compressedElements), 0.0f);
}

CO2Rounds::~CO2Rounds() {
  try {
    (void)complete();
  } catch (...) {
  }
}

double CO2Rounds::roundLossOfBuffer() const {
  const char *slot = static_cast<const char *>(roundBuffer.data()) +
                     elements * dtypeSize(dtype);
  if (dtype == DType::F64)
    return *reinterpret_cast<const double *>(slot);
  return *reinterpret_cast<const float *>(slot);
}

void CO2Rounds::setBufferLoss(double loss) { roundBuffer.set(elements, loss); }

void CO2Rounds::addLoss(double loss) { lossSum.set(0, lossSum.get(0) + loss); }

void CO2Rounds::start() {
  artifact.tensor("co2.round").set(0, -1);
  if (!isSharded) {
    outer.call();
    keepAnchor();
    return;
  }
  // This rank's slice of the flattened parameters becomes its anchors (at
  // round -1 outer_shard reads it from its mean input).
  char *flat = static_cast<char *>(roundBuffer.data());
  std::memset(flat, 0, roundBuffer.byteSize());
  for (const Tensor *p : params) {
    std::memcpy(flat, p->data(), p->byteSize());
    flat += p->byteSize();
  }
  const CO2Shard &slice = artifact.manifest().co2.layout[rank];
  std::memcpy(shardMean->data(),
              static_cast<char *>(roundBuffer.data()) +
                  slice.offset * dtypeSize(dtype),
              shardMean->byteSize());
  // The buffer holds no round yet, the same (zero) on every rank, as a
  // checkpoint expects of it.
  std::memset(roundBuffer.data(), 0, roundBuffer.byteSize());
  updateShard(-1);
}

double CO2Rounds::complete() {
  switch (phase) {
  case Phase::None:
  case Phase::Done:
    break;
  case Phase::AllReduce:
    loom_rt_wait(handle);
    for (int64_t h : std::exchange(handles, {}))
      loom_rt_wait(h);
    if (compressed()) {
      // The mean change plus the anchor it is a change from: the mean.
      float *mean = roundBuffer.dataAs<float>();
      for (int64_t i = 0; i < compressedElements; ++i)
        mean[i] += sentAnchor[size_t(i)];
    }
    phase = Phase::Done;
    break;
  case Phase::ReduceScatter:
    loom_rt_wait(handle);
    advanceShard();
    [[fallthrough]];
  case Phase::AllGather:
    loom_rt_wait(handle);
    phase = Phase::Done;
    break;
  }
  if (voteHandle) {
    loom_rt_wait(voteHandle);
    voteHandle = 0;
    votesArrived = true;
  }
  roundDone.set(0, phase == Phase::Done ? 1 : 0);
  // Both forms bring the round's mean loss in the buffer's loss slot.
  return phase == Phase::Done ? roundLossOfBuffer() : NAN;
}

void CO2Rounds::poll() {
  if (phase == Phase::ReduceScatter && collectiveFinished(handle))
    advanceShard();
}

double CO2Rounds::outerStep(int64_t step, bool wantStop) {
  const int64_t round = step / tau - 1;
  const bool hadRound = phase != Phase::None;
  double previousLoss = complete();
  if (!hadRound)
    previousLoss = NAN;
  agreedStop = votesArrived && stopVotes > 0;
  if (isSharded)
    outerSharded(round);
  else
    outerReplicated(round);
  lossSum.set(0, 0);
  // Every rank issues it at every outer step, after the round's collective
  // (a sharded round's all-gather follows it in the queue on every rank).
  stopVotes = wantStop ? 1 : 0;
  votesArrived = false;
  voteHandle = loom_rt_all_reduce_start(
      0, &stopVotes, 1, static_cast<int32_t>(DType::F64), LOOM_SUM);
  return previousLoss;
}

void CO2Rounds::outerReplicated(int64_t round) {
  // 1. The previous round's mean, into outer_step's inputs.
  if (phase == Phase::Done) {
    const char *from = static_cast<const char *>(roundBuffer.data());
    for (Tensor *mean : means) {
      std::memcpy(mean->data(), from, mean->byteSize());
      from += mean->byteSize();
    }
  }
  // 2. This round's parameters and mean loss, averaged over the ranks
  // while the next round computes.
  if (compressed()) {
    startCompressedRound(round);
    artifact.tensor("co2.round").set(0, static_cast<double>(round));
    outer.call();
    keepAnchor();
    return;
  }
  char *to = static_cast<char *>(roundBuffer.data());
  for (const Tensor *p : params) {
    std::memcpy(to, p->data(), p->byteSize());
    to += p->byteSize();
  }
  setBufferLoss(lossSum.get(0) / static_cast<double>(tau));
  handle = loom_rt_all_reduce_start(0, roundBuffer.data(), elements + 1,
                                    static_cast<int32_t>(dtype), LOOM_MEAN);
  phase = Phase::AllReduce;
  // 3. The outer update (round 0 has no mean yet; outer_step knows).
  artifact.tensor("co2.round").set(0, static_cast<double>(round));
  outer.call();
}

void CO2Rounds::startCompressedRound(int64_t round) {
  GradientCompression *compression = currentCompression();
  if (!compression)
    fail("CO2: the outer round is compressed, but no compression is "
         "installed");
  // The last round measured (L-GreCo): every rank re-chooses the plan now,
  // when nothing is in flight (its all-reduce runs on this thread).
  if (round > 0 && compression->solveDue(round - 1))
    compression->post(compression->solve(comm, round - 1),
                      "plan chosen after round " + std::to_string(round - 1));
  compression->beginStep(round);
  // The changes since the anchor; the anchor kept to add back.
  float *buffer = roundBuffer.dataAs<float>();
  const float *from = anchor->dataAs<float>();
  int64_t at = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const float *p = params[i]->dataAs<float>();
    const int64_t n = params[i]->numElements();
    if (slots[i] < 0)
      std::memcpy(buffer + at, p, size_t(n) * sizeof(float));
    else
      for (int64_t j = 0; j < n; ++j)
        buffer[at + j] = p[j] - from[at + j];
    at += n;
  }
  std::memcpy(sentAnchor.data(), from, anchor->byteSize());
  setBufferLoss(lossSum.get(0) / static_cast<double>(tau));
  // Every rank issues the same collectives in the same order: one
  // compressed averaging per listed parameter, then one plain all-reduce of
  // the rest and the loss slot.
  at = 0;
  for (size_t i = 0; i < params.size() && slots[i] >= 0; ++i) {
    const int64_t n = params[i]->numElements();
    handles.push_back(loom_rt_compressed_all_reduce_start(
        0, buffer + at, n, LOOM_F32, LOOM_MEAN, int32_t(slots[i])));
    at += n;
  }
  handle = loom_rt_all_reduce_start(0, buffer + at, elements - at + 1, LOOM_F32,
                                    LOOM_MEAN);
  phase = Phase::AllReduce;
}

void CO2Rounds::keepAnchor() {
  if (!compressed())
    return;
  float *to = anchor->dataAs<float>();
  for (size_t i = 0; i < params.size() && slots[i] >= 0; ++i) {
    std::memcpy(to, params[i]->data(), params[i]->byteSize());
    to += params[i]->numElements();
  }
}

void CO2Rounds::outerSharded(int64_t round) {
  if (phase != Phase::Done) {
    // Round 0: no mean yet. The update keeps the anchors (p = a) and the
    // first anchor is gathered here, once, synchronously.
    updateShard(round);
    loom_rt_all_gather(0, shardOut->data(), roundBuffer.data(), shardElements,
                       static_cast<int32_t>(dtype));
  }
  // The round buffer holds the new anchor: it becomes the parameters, and
  // the parameters (this round's local model) take its place to be sent.
  char *flat = static_cast<char *>(roundBuffer.data());
  for (Tensor *p : params) {
    std::swap_ranges(static_cast<char *>(p->data()),
                     static_cast<char *>(p->data()) + p->byteSize(), flat);
    flat += p->byteSize();
  }
  setBufferLoss(lossSum.get(0) / static_cast<double>(tau));
  // The padding is whatever the gather left there: zero, because the
  // update keeps padding at zero (its mean, anchor and momentum are zero).
  handle = reduceScatterStartInPlace(roundBuffer.data(), shardMean->data(),
                                     shardElements, dtype, ReduceOp::Mean);
  phase = Phase::ReduceScatter;
  roundInFlight = round + 1;
}

void CO2Rounds::updateShard(int64_t round) {
  artifact.tensor("co2.round").set(0, static_cast<double>(round));
  outer.call();
}

void CO2Rounds::advanceShard() {
  // The loss slot is an element of one rank's slice: that rank takes the
  // mean loss out (and keeps the slot's outer state at zero), then puts it
  // into its new anchor slice, so that the gather brings it to every rank.
  const auto [owner, slot] = artifact.manifest().co2.lossSlot();
  double loss = 0;
  if (rank == owner) {
    loss = shardMean->get(slot);
    shardMean->set(slot, shardPrevAnchor->get(slot)); // d = p - mean = 0
  }
  updateShard(roundInFlight);
  if (rank == owner)
    shardOut->set(slot, loss);
  // outer_shard writes shardOut again only after this gather is done.
  handle = allGatherStartInPlace(shardOut->data(), roundBuffer.data(),
                                 shardElements, dtype);
  phase = Phase::AllGather;
}

PerRankTensors CO2Rounds::checkpointTensors() {
  PerRankTensors tensors;
  // The replicated form's outer state is outer_step's: every rank updates
  // it from the same means. The sharded form's slices are each rank's own.
  std::set<std::string> outerState;
  if (!isSharded)
    for (const EntryArg &arg : outer.spec().args)
      if (arg.role == ArgRole::State)
        outerState.insert(arg.name);
  for (Tensor *t : artifact.state())
    (outerState.count(t->name()) ? tensors.alike : tensors.optimizerState)
        .push_back(t);
  tensors.alike.push_back(&roundBuffer);
  tensors.alike.push_back(&roundDone);
  if (compressed())
    tensors.alike.push_back(anchor.get());
  tensors.rankState.push_back(&lossSum);
  return tensors;
}

void CO2Rounds::restore() {
  phase = roundDone.get(0) != 0 ? Phase::Done : Phase::None;
}

} // namespace loom::rt
