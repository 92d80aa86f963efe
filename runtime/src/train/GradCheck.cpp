//===- GradCheck.cpp - Finite-difference gradient checks --------*- C++ -*-===//
//
// For each sampled element p_i: f(p_i + eps) and f(p_i - eps) through the
// `loss` entry, divided by the perturbation actually stored (p_i + eps
// rounded to the param dtype minus p_i - eps rounded), which keeps the
// estimate honest for f32 params where eps is partly lost to rounding.
// An element passes when |numeric - analytic| <= atol + rtol * max(|numeric|,
// |analytic|), as numpy.isclose.
//
// For a cuda artifact the entries run on the GPU: the batch is uploaded once,
// each perturbed param after each change, and the loss and gradients are
// downloaded after the calls (Artifact.h's sync points; no-ops on cpu).
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/GradCheck.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Data.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Random.h"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <set>

namespace loom::rt {

namespace {

/// `count` distinct indices below `size`, sorted (Floyd's algorithm), drawn
/// from the stream of (seed, "gradcheck:<name>").
std::vector<int64_t> sampleIndices(int64_t size, int64_t count, uint64_t seed,
                                   const std::string &name) {
  std::vector<int64_t> indices;
  if (size <= count) {
    for (int64_t i = 0; i < size; ++i)
      indices.push_back(i);
    return indices;
  }
  CounterRng rng = CounterRng::forName(seed, "gradcheck:" + name);
  std::set<int64_t> chosen;
  for (int64_t j = size - count; j < size; ++j) {
    int64_t pick = static_cast<int64_t>(rng.below(j + 1));
    chosen.insert(chosen.count(pick) ? j : pick);
  }
  return std::vector<int64_t>(chosen.begin(), chosen.end());
}

Tensor &scalarOutput(Artifact &artifact, const EntrySpec &entry,
                     const std::string &name) {
  const EntryArg *arg = entry.findOutput(name);
  if (!arg)
    fail("%s: entries.%s has no output named '%s'",
         artifact.manifest().source.c_str(), entry.name.c_str(), name.c_str());
  if (!arg->shape.empty() || !isFloat(arg->dtype))
    fail("%s: entries.%s: output '%s' must be an f32 or f64 scalar",
         artifact.manifest().source.c_str(), entry.name.c_str(), name.c_str());
  return artifact.tensor(name);
}

} // namespace

GradCheckResult runGradCheck(Artifact &artifact,
                             const GradCheckOptions &options,
                             std::ostream &log) {
  // A slice's entries gather the other ranks' slices, which one process
  // does not have.
  const Manifest &manifest = artifact.manifest();
  if (manifest.zero.stage == 3)
    fail("%s: the artifact's params are slices over %lld ranks (ZeRO stage "
         "3), and loom-gradcheck runs one rank; check the gradients of the "
         "model compiled without --dp and --zero",
         manifest.source.c_str(), static_cast<long long>(manifest.zero.ranks));
  for (const TensorSpec &param : manifest.params)
    if (param.split.enabled())
      fail("%s: the artifact's param '%s' is one rank's part over %lld "
           "ranks (tensor parallelism), and loom-gradcheck runs one rank; "
           "check the gradients of the model compiled without --tp",
           manifest.source.c_str(), param.name.c_str(),
           static_cast<long long>(param.split.parts));
  if (manifest.pipeline.enabled())
    fail("%s: the artifact is pipelined over %lld stages, each rank "
         "running its own, and loom-gradcheck runs one rank; check the "
         "gradients of the model compiled without --pp",
         manifest.source.c_str(),
         static_cast<long long>(manifest.pipeline.stages));
  for (const char *name : {"loss", "loss_and_grad"})
    if (!artifact.hasEntry(name))
      fail("artifact %s has no '%s' entry; loom-gradcheck needs both 'loss' "
           "and 'loss_and_grad' (compile the model with them)",
           artifact.directory().c_str(), name);
  Entry &lossEntry = artifact.entry("loss");
  Entry &gradEntry = artifact.entry("loss_and_grad");
  Tensor &loss = scalarOutput(artifact, lossEntry.spec(), "loss");
  scalarOutput(artifact, gradEntry.spec(), "loss");

  std::vector<Tensor *> grads;
  for (Tensor *param : artifact.params()) {
    std::string gradName = "grad:" + param->name();
    const EntryArg *arg = gradEntry.spec().findOutput(gradName);
    if (!arg)
      fail("%s: entries.loss_and_grad has no output '%s' for param '%s'",
           artifact.manifest().source.c_str(), gradName.c_str(),
           param->name().c_str());
    if (arg->shape != param->shape())
      fail("%s: entries.loss_and_grad: output '%s' has shape %s but the param "
           "has shape %s",
           artifact.manifest().source.c_str(), gradName.c_str(),
           shapeToString(arg->shape).c_str(),
           shapeToString(param->shape()).c_str());
    grads.push_back(&artifact.tensor(gradName));
  }

  artifact.initialize(options.seed);
  artifact.step() = 1;
  DataOptions dataOptions;
  dataOptions.seed = options.seed;
  std::unique_ptr<DataSource> data =
      makeDataSource(dataOptions, artifact.manifest().task);
  data->fill(0, BatchBuffers::forArtifact(artifact));
  artifact.uploadInputs();

  gradEntry.call();
  artifact.downloadOutputs({&loss});
  for (Tensor *grad : grads)
    artifact.download(*grad);
  double gradLoss = loss.get(0);
  std::vector<std::vector<double>> analytic;
  for (Tensor *grad : grads) {
    std::vector<double> values(grad->numElements());
    for (int64_t i = 0; i < grad->numElements(); ++i)
      values[i] = grad->get(i);
    analytic.push_back(std::move(values));
  }
  lossEntry.call();
  artifact.downloadOutputs({&loss});
  double baseLoss = loss.get(0);
  if (!std::isfinite(baseLoss))
    fail("the loss entry returned %g at the initial params; cannot check "
         "gradients",
         baseLoss);
  if (std::fabs(baseLoss - gradLoss) >
      options.atol + options.rtol * std::fabs(baseLoss))
    log << formatString("warning: 'loss' returns %.10g but 'loss_and_grad' "
                        "returns loss %.10g for the same inputs\n",
                        baseLoss, gradLoss);

  GradCheckResult result;
  for (size_t p = 0; p < artifact.params().size(); ++p) {
    Tensor &param = *artifact.params()[p];
    ParamGradCheck report;
    report.name = param.name();
    for (int64_t index : sampleIndices(param.numElements(), options.samples,
                                       options.seed, param.name())) {
      double original = param.get(index);
      param.set(index, original + options.eps);
      double plus = param.get(index);
      artifact.upload(param);
      lossEntry.call();
      artifact.downloadOutputs({&loss});
      double lossPlus = loss.get(0);
      param.set(index, original - options.eps);
      double minus = param.get(index);
      artifact.upload(param);
      lossEntry.call();
      artifact.downloadOutputs({&loss});
      double lossMinus = loss.get(0);
      param.set(index, original);
      artifact.upload(param);
      if (plus == minus)
        fail("--eps %g vanishes when added to element %lld of '%s' (value "
             "%g, dtype %s); use a larger --eps",
             options.eps, static_cast<long long>(index), param.name().c_str(),
             original, dtypeName(param.dtype()));

      GradCheckElement element;
      element.param = param.name();
      element.index = index;
      element.numeric = (lossPlus - lossMinus) / (plus - minus);
      element.analytic = analytic[p][index];
      element.absErr = std::fabs(element.numeric - element.analytic);
      double magnitude =
          std::max(std::fabs(element.numeric), std::fabs(element.analytic));
      element.relErr = magnitude > 0 ? element.absErr / magnitude : 0;
      if (!std::isfinite(element.numeric) || !std::isfinite(element.analytic))
        element.absErr = element.relErr = element.failRatio = INFINITY;
      else
        element.failRatio =
            element.absErr / (options.atol + options.rtol * magnitude);

      ++report.checked;
      report.maxAbsErr = std::max(report.maxAbsErr, element.absErr);
      report.maxRelErr = std::max(report.maxRelErr, element.relErr);
      if (!(element.failRatio <= 1))
        report.passed = false;
      if (result.elements == 0 || element.failRatio > result.worst.failRatio)
        result.worst = element;
      ++result.elements;
      result.maxRelErr = std::max(result.maxRelErr, element.relErr);
    }
    log << formatString(
        "  %-40s %-14s %3lld checked  max abs err %.3e  max "
        "rel err %.3e  %s\n",
        param.name().c_str(), shapeToString(param.shape()).c_str(),
        static_cast<long long>(report.checked), report.maxAbsErr,
        report.maxRelErr, report.passed ? "ok" : "FAIL");
    result.passed &= report.passed;
    result.params.push_back(std::move(report));
  }
  return result;
}

} // namespace loom::rt
