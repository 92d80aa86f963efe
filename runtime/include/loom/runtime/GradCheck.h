//===- GradCheck.h - Finite-difference gradient checks ----------*- C++ -*-===//
//
// Compares the artifact's `loss_and_grad` gradients with central differences
// of its `loss` entry on seeded-random elements of every param. This is the
// end-to-end test of the compiler's autodiff: it needs nothing but the
// artifact.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_GRADCHECK_H
#define LOOM_RUNTIME_GRADCHECK_H

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace loom::rt {

class Artifact;

struct GradCheckOptions {
  uint64_t seed = 0;
  double eps = 1e-6;
  double rtol = 1e-4;
  double atol = 1e-7;
  /// Elements checked per param (all of them if the param is smaller).
  int64_t samples = 16;
};

struct GradCheckElement {
  std::string param;
  int64_t index = -1;
  double numeric = 0;
  double analytic = 0;
  double absErr = 0;
  /// absErr / max(|numeric|, |analytic|); 0 when both are 0.
  double relErr = 0;
  /// absErr / (atol + rtol * max(|numeric|, |analytic|)); > 1 fails.
  double failRatio = 0;
};

struct ParamGradCheck {
  std::string name;
  int64_t checked = 0;
  double maxAbsErr = 0;
  double maxRelErr = 0;
  bool passed = true;
};

struct GradCheckResult {
  bool passed = true;
  std::vector<ParamGradCheck> params;
  int64_t elements = 0;
  double maxRelErr = 0;
  /// The element with the largest failRatio.
  GradCheckElement worst;
};

/// Initialises params from `options.seed`, fills inputs with synthetic batch 0
/// and checks. Writes one line per param to `log`. Throws Error if the
/// artifact lacks the `loss`/`loss_and_grad` entries or their outputs.
GradCheckResult runGradCheck(Artifact &artifact,
                             const GradCheckOptions &options,
                             std::ostream &log);

} // namespace loom::rt

#endif // LOOM_RUNTIME_GRADCHECK_H
