//===- PassCounter.h - Statistics that count in release LLVM ---*- C++ -*-===//
//
// MLIR's Pass::Statistic is an llvm::Statistic, which a release build of
// LLVM (NDEBUG without LLVM_FORCE_ENABLE_STATS: Debian's) compiles to a
// no-op, and libMLIR's report reads it through the same no-op: with the
// LLVM Loom builds against, --mlir-pass-statistics prints an empty report
// whatever a pass counts. Loom's passes count with PassCounter instead,
// declared like a Pass::Statistic:
//
//   PassCounter numFused{this, "num-fused", "Loops merged into others"};
//   ...
//   ++numFused;
//
// and loomc and loom-opt print the counts where MLIR's report would have
// them (addPassCounterReport).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_SUPPORT_PASSCOUNTER_H
#define LOOM_SUPPORT_PASSCOUNTER_H

#include <atomic>
#include <cstdint>

namespace mlir {
class Pass;
class PassManager;
} // namespace mlir

namespace mlir::loom {

/// A count a pass keeps while it runs; registered with its pass, whose
/// copies (MLIR clones a pass per thread) each get their own.
class PassCounter {
public:
  PassCounter(Pass *owner, const char *name, const char *description);
  ~PassCounter();
  /// A pass copied with the implicit copy constructor would share its
  /// original's counters: declare `Foo(const Foo &o) : Base(o) {}`.
  PassCounter(const PassCounter &) = delete;
  PassCounter &operator=(const PassCounter &) = delete;

  PassCounter &operator++() { return *this += 1; }
  PassCounter &operator+=(uint64_t n) {
    value.fetch_add(n, std::memory_order_relaxed);
    return *this;
  }
  /// The count since the last take (the report takes it after each run of
  /// the pass).
  uint64_t take() { return value.exchange(0, std::memory_order_relaxed); }

  const char *const name;
  const char *const description;

private:
  Pass *owner;
  std::atomic<uint64_t> value{0};
};

/// With MLIR's --mlir-pass-statistics given: has `pm` print the counts of
/// the Loom passes it ran, summed over their copies, after MLIR's own
/// (empty) report, in its format. Nothing otherwise.
void addPassCounterReport(PassManager &pm);

} // namespace mlir::loom

#endif // LOOM_SUPPORT_PASSCOUNTER_H
