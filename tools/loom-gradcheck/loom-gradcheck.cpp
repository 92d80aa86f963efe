//===- loom-gradcheck.cpp - Check an artifact's gradients -------*- C++ -*-===//
//
// Thin main around runGradCheck: compares the `loss_and_grad` gradients of a
// compiled artifact with central differences of its `loss` entry. Exit status
// 0 on PASS, 1 on FAIL or error, 2 for command-line mistakes.
//
//===----------------------------------------------------------------------===//

#include "loom/Version.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Flags.h"
#include "loom/runtime/GradCheck.h"

#include <iostream>

using namespace loom::rt;

static const char *kHelp = R"(usage: loom-gradcheck ARTIFACT_DIR [options]

Checks the gradients of a compiled artifact (which needs the `loss` and
`loss_and_grad` entries): params are initialised from the seed, inputs are
synthetic batch 0, and for every param up to K seeded-random elements are
compared with the central difference (f(p+eps) - f(p-eps)) / (2 eps).
An element passes when |numeric - analytic| <= atol + rtol * max(|numeric|,
|analytic|). Compile the model in f64 for meaningful tolerances.

options:
  --seed S       seed for params, inputs and the sampled elements (default: 0)
  --eps E        finite-difference step (default: 1e-6)
  --rtol R       relative tolerance (default: 1e-4)
  --atol A       absolute tolerance (default: 1e-7)
  --samples K    elements checked per param (default: 16; all if fewer)
  -h, --help     show this help
  --version      show Loom's version and the commit it was built from

example:
  loom-gradcheck out/ --samples 32 --seed 1
)";

static int run(int argc, char **argv) {
  GradCheckOptions options;
  std::string artifactDir, value;
  ArgCursor args(argc, argv);
  while (!args.done()) {
    if (args.flag("-h") || args.flag("--help")) {
      std::cout << kHelp;
      return 0;
    }
    if (args.flag("--version")) {
      std::cout << "loom-gradcheck: " LOOM_VERSION_STRING "\n";
      return 0;
    }
    if (args.value("--seed", value))
      options.seed = parseSeedFlag("--seed", value);
    else if (args.value("--eps", value))
      options.eps = parsePositiveFlag("--eps", value);
    else if (args.value("--rtol", value))
      options.rtol = parsePositiveFlag("--rtol", value, /*allowZero=*/true);
    else if (args.value("--atol", value))
      options.atol = parsePositiveFlag("--atol", value, /*allowZero=*/true);
    else if (args.value("--samples", value))
      options.samples = parseIntFlag("--samples", value, 1);
    else if (args.current().size() > 1 && args.current()[0] == '-')
      throw UsageError("unknown option '" + args.current() + "'");
    else if (artifactDir.empty())
      artifactDir = args.take();
    else
      throw UsageError("unexpected argument '" + args.current() +
                       "' (only one ARTIFACT_DIR)");
  }
  if (artifactDir.empty())
    throw UsageError("missing ARTIFACT_DIR");

  std::unique_ptr<Artifact> artifact = Artifact::load(artifactDir);
  if (artifact->manifest().dtype != DType::F64)
    std::cerr << "loom-gradcheck: warning: the artifact computes in "
              << dtypeName(artifact->manifest().dtype)
              << "; finite differences are only reliable in f64 (compile "
                 "with f64, or loosen --eps/--rtol)\n";
  GradCheckResult result = runGradCheck(*artifact, options, std::cout);
  if (result.passed) {
    // The margin, not the largest relative error: a gradient that is 0 up
    // to rounding has a relative error near 1 and passes on --atol.
    std::cout << formatString("gradcheck: PASS (%zu params, %lld elements; "
                              "the worst error is %.3g of its tolerance "
                              "atol + rtol * |gradient|)",
                              result.params.size(),
                              static_cast<long long>(result.elements),
                              result.worst.failRatio)
              << std::endl;
    return 0;
  }
  const GradCheckElement &worst = result.worst;
  std::cout << formatString(
                   "gradcheck: FAIL (worst: %s element %lld: numeric %.9g "
                   "analytic %.9g, abs err %.3e, rel err %.3e)",
                   worst.param.c_str(), static_cast<long long>(worst.index),
                   worst.numeric, worst.analytic, worst.absErr, worst.relErr)
            << std::endl;
  return 1;
}

int main(int argc, char **argv) {
  setToolName("loom-gradcheck");
  try {
    return run(argc, argv);
  } catch (const UsageError &e) {
    std::cerr << "loom-gradcheck: error: " << e.what()
              << "\n(run 'loom-gradcheck --help' for usage)" << std::endl;
    return 2;
  } catch (const std::exception &e) {
    std::cerr << "loom-gradcheck: error: " << e.what() << std::endl;
    return 1;
  } catch (...) {
    std::cerr << "loom-gradcheck: error: unknown internal error" << std::endl;
    return 1;
  }
}
