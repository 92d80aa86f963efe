//===- PartitionModule.cpp - An LLVM module in parts for parallel builds --===//
#include "PartitionModule.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>

// No `using namespace llvm`: this file is compiled in one unit with the
// driver's others (cmake/LoomUnityBuild.cmake).
using llvm::EquivalenceClasses;
using llvm::Function;
using llvm::GlobalValue;
using llvm::GlobalVariable;
using llvm::Module;
using llvm::User;

static std::string toBitcode(const Module &module) {
  std::string bitcode;
  llvm::raw_string_ostream os(bitcode);
  llvm::WriteBitcodeToFile(module, os);
  return bitcode;
}

/// The function whose body uses `user`, if any.
static Function *userFunction(User *user) {
  if (auto *inst = llvm::dyn_cast<llvm::Instruction>(user))
    return inst->getFunction();
  return nullptr;
}

/// Groups each defined function with the internal functions it uses (and
/// they with theirs): a group must not be cut, so that LLVM may still
/// inline them. A `noinline` one (a loop nest of the step,
/// --loom-outline-loop-nests) needs no group: it may go to another part,
/// hidden (externalizeShared).
static EquivalenceClasses<Function *> groupFunctions(Module &module) {
  EquivalenceClasses<Function *> groups;
  for (Function &fn : module) {
    if (fn.isDeclaration())
      continue;
    groups.insert(&fn);
    if (!fn.hasLocalLinkage() || fn.hasFnAttribute(llvm::Attribute::NoInline))
      continue;
    for (User *user : fn.users())
      if (Function *caller = userFunction(user))
        groups.unionSets(&fn, caller);
  }
  return groups;
}

/// Which part defines each group's functions: the groups in the order the
/// module defines them, cut into runs of about equal size (a group goes to
/// the part its middle falls in). Linked in part order, the objects keep
/// the module's order of functions, and so its code layout: the bench
/// GPT's step ran 3 % slower, with identical code, when the largest group
/// was built (and linked) first.
static llvm::DenseMap<Function *, unsigned>
assignParts(Module &module, const EquivalenceClasses<Function *> &groups,
            unsigned parts) {
  llvm::SmallVector<std::pair<Function *, size_t>> order; // (leader, size)
  llvm::DenseMap<Function *, size_t> index;
  size_t total = 0;
  for (Function &fn : module) {
    if (fn.isDeclaration())
      continue;
    Function *leader = groups.getLeaderValue(&fn);
    auto [it, inserted] = index.try_emplace(leader, order.size());
    if (inserted)
      order.push_back({leader, 0});
    order[it->second].second += fn.getInstructionCount();
    total += fn.getInstructionCount();
  }
  llvm::DenseMap<Function *, unsigned> part;
  size_t before = 0;
  for (auto [leader, size] : order) {
    double middle = before + size / 2.0;
    unsigned p = std::min<unsigned>(parts - 1, middle * parts / total);
    before += size;
    for (auto member = groups.findLeader(leader); member != groups.member_end();
         ++member)
      part[*member] = p;
  }
  return part;
}

/// Internal symbols that two parts (or a global's initializer) refer to
/// become hidden globals; constant internal globals stay internal, copied
/// into each part.
static void
externalizeShared(Module &module,
                  const llvm::DenseMap<Function *, unsigned> &part) {
  auto makeHidden = [](GlobalValue &value) {
    value.setLinkage(GlobalValue::ExternalLinkage);
    value.setVisibility(GlobalValue::HiddenVisibility);
  };
  for (Function &fn : module) {
    if (!fn.hasLocalLinkage() || fn.isDeclaration())
      continue;
    unsigned home = part.lookup(&fn);
    if (llvm::any_of(fn.users(), [&](User *user) {
          Function *caller = userFunction(user);
          return !caller || part.lookup(caller) != home;
        }))
      makeHidden(fn);
  }
  for (GlobalVariable &global : module.globals())
    if (global.hasLocalLinkage() && !global.isConstant())
      makeHidden(global);
}

llvm::SmallVector<std::string>
mlir::loom::driver::partitionModule(Module &module, unsigned parts) {
  EquivalenceClasses<Function *> groups = groupFunctions(module);
  unsigned leaders = 0;
  for (auto it = groups.begin(); it != groups.end(); ++it)
    leaders += (*it)->isLeader();
  parts = std::max(1u, std::min(parts, leaders));
  if (parts == 1)
    return {};
  llvm::DenseMap<Function *, unsigned> part =
      assignParts(module, groups, parts);
  externalizeShared(module, part);
  // Parts that got no group are skipped; the first that did defines the
  // globals that are not copied.
  llvm::SmallVector<unsigned> used;
  for (unsigned p = 0; p < parts; ++p)
    if (llvm::any_of(part, [&](auto &entry) { return entry.second == p; }))
      used.push_back(p);
  llvm::SmallVector<std::string> bitcode;
  for (unsigned p : used) {
    llvm::ValueToValueMapTy map;
    // Functions defined in part p; internal constants in every part, other
    // globals in the first part only.
    std::unique_ptr<Module> piece =
        llvm::CloneModule(module, map, [&](const GlobalValue *value) {
          if (auto *fn = llvm::dyn_cast<Function>(value))
            return part.lookup(const_cast<Function *>(fn)) == p;
          auto *global = llvm::dyn_cast<GlobalVariable>(value);
          return p == used.front() ||
                 (global && global->isConstant() && global->hasLocalLinkage());
        });
    bitcode.push_back(toBitcode(*piece));
  }
  return bitcode;
}
