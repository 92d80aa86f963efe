//===- PassCounter.cpp - Pass statistics that count in release LLVM -------===//
#include "loom/Support/PassCounter.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <mutex>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::loom;

namespace {
/// The live counters of each pass instance. Passes on several threads
/// create, count and run concurrently.
struct Registry {
  std::mutex mutex;
  llvm::DenseMap<Pass *, std::vector<PassCounter *>> counters;
};
Registry &registry() {
  static Registry r;
  return r;
}
} // namespace

PassCounter::PassCounter(Pass *owner, const char *name, const char *description)
    : name(name), description(description), owner(owner) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.counters[owner].push_back(this);
}

PassCounter::~PassCounter() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.counters.find(owner);
  if (it == r.counters.end())
    return;
  llvm::erase(it->second, this);
  if (it->second.empty())
    r.counters.erase(it);
}

namespace {
/// Sums each Loom pass's counts after every run of it, and prints them when
/// the pass manager is done with it (MLIR prints its report at the end of
/// PassManager::run, before the pass manager and this are destroyed).
class CounterReport : public PassInstrumentation {
public:
  ~CounterReport() override { print(llvm::errs()); }

  void runAfterPass(Pass *pass, Operation *) override { take(pass); }
  void runAfterPassFailed(Pass *pass, Operation *) override { take(pass); }

private:
  void take(Pass *pass) {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.counters.find(pass);
    if (it == r.counters.end())
      return;
    auto &totals = passes[pass->getName()];
    for (PassCounter *counter : it->second) {
      auto &total = totals[counter->name];
      total.description = counter->description;
      total.value += counter->take();
    }
  }

  /// As MLIR's list display prints a pass's statistics: the pass's name,
  /// then "(S) <value> <name> - <description>" sorted by name, aligned.
  void print(llvm::raw_ostream &os) const {
    for (const auto &[pass, totals] : passes) {
      os << pass << "\n";
      size_t nameWidth = 0, valueWidth = 0;
      for (const auto &[name, total] : totals) {
        nameWidth = std::max(nameWidth, name.size());
        valueWidth = std::max(valueWidth, std::to_string(total.value).size());
      }
      for (const auto &[name, total] : totals)
        os << llvm::format("  (S) %*llu %-*s - %s\n", int(valueWidth),
                           (unsigned long long)total.value, int(nameWidth),
                           name.c_str(), total.description.c_str());
    }
    os.flush();
  }

  struct Total {
    std::string description;
    uint64_t value = 0;
  };
  /// By pass name in the order the passes first ran, then by counter name.
  llvm::MapVector<StringRef, std::map<std::string, Total>> passes;
};
} // namespace

/// Whether MLIR's --mlir-pass-statistics was given. The pass manager has no
/// accessor for it, so it is read from LLVM's option registry.
static bool statisticsRequested() {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-pass-statistics");
  return it != options.end() && it->second->getNumOccurrences() > 0;
}

void mlir::loom::addPassCounterReport(PassManager &pm) {
  if (statisticsRequested())
    pm.addInstrumentation(std::make_unique<CounterReport>());
}
