//===- BackgroundSave.cpp - Checkpoints written while training goes on -*- C++
//-*-===//
//
// A thread per save: saves are minutes apart, so starting one costs nothing
// that matters, and a failed writer leaves nothing behind for the next.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/BackgroundSave.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Error.h"

#include <cstring>

namespace loom::rt {

namespace {

/// Owned copies of `tensors`, and pointers to them.
std::vector<Tensor *> copyInto(const std::vector<Tensor *> &tensors,
                               std::vector<std::unique_ptr<Tensor>> &copies) {
  copies.clear();
  std::vector<Tensor *> pointers;
  for (const Tensor *t : tensors) {
    copies.push_back(
        std::make_unique<Tensor>(t->name(), t->role(), t->shape(), t->dtype()));
    std::memcpy(copies.back()->data(), t->data(), t->byteSize());
    pointers.push_back(copies.back().get());
  }
  return pointers;
}

} // namespace

BackgroundSave::~BackgroundSave() { finish(); }

BackgroundSave::Outcome BackgroundSave::finish() {
  if (!writer.joinable())
    return {};
  writer.join();
  Outcome done = current;
  current = {};
  params.clear();
  optimizerState.clear();
  return done;
}

void BackgroundSave::start(const std::string &path, Artifact &artifact,
                           const TrainerState &state) {
  if (writer.joinable())
    fail("a checkpoint is still being written to %s; finish it first",
         current.path.c_str());
  checkSaveTarget(path);
  std::vector<Tensor *> paramCopy = copyInto(artifact.params(), params);
  std::vector<Tensor *> stateCopy = copyInto(artifact.state(), optimizerState);
  current = {};
  current.saved = true;
  current.path = path;
  current.step = state.step;
  writer = std::thread([this, path, state, paramCopy, stateCopy] {
    auto started = std::chrono::steady_clock::now();
    try {
      saveCheckpoint(path, paramCopy, stateCopy, state);
    } catch (const std::exception &e) {
      current.error = e.what();
    }
    current.seconds = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - started)
                          .count();
  });
}

} // namespace loom::rt
