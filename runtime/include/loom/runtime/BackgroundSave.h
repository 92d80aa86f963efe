//===- BackgroundSave.h - Checkpoints written while training goes on -*- C++
//-*-===//
//
// `loom-run --save-async` (research/reliability.md, scenario 13): rank 0
// copies the params and optimizer state when a save is due (a memcpy, tens
// of milliseconds for hundreds of MB) and a thread of its own writes the
// copy to the checkpoint as saveCheckpoint does (temporary directory,
// sha256, fsync, swap), while the next steps run. The copy is what the save
// holds, whatever the steps do to the params meanwhile. One save at a time:
// the next waits for the one in flight, and so does the end of training;
// a failed write is reported then. Until a save is committed the previous
// checkpoint stays the latest, so a crash at any point loses no more than
// the steps since that one.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_BACKGROUNDSAVE_H
#define LOOM_RUNTIME_BACKGROUNDSAVE_H

#include "loom/runtime/Checkpoint.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace loom::rt {

class Artifact;
class Tensor;

class BackgroundSave {
public:
  /// What became of a save that was in flight.
  struct Outcome {
    /// False when no save was in flight.
    bool saved = false;
    std::string path;
    int64_t step = 0;
    /// Seconds the writer took (not spent by the training).
    double seconds = 0;
    /// The write's error; "" when it succeeded.
    std::string error;
  };

  BackgroundSave() = default;
  /// Waits for the save in flight (its outcome is dropped).
  ~BackgroundSave();
  BackgroundSave(const BackgroundSave &) = delete;
  BackgroundSave &operator=(const BackgroundSave &) = delete;

  /// Waits for the save in flight, if any, and says what became of it.
  Outcome finish();

  /// Copies `artifact`'s params and state and starts writing them with
  /// `state` to `path`. The save in flight must have been finished. Throws
  /// Error if `path` cannot take a checkpoint (checkSaveTarget).
  void start(const std::string &path, Artifact &artifact,
             const TrainerState &state);

  bool inFlight() const { return writer.joinable(); }

private:
  std::vector<std::unique_ptr<Tensor>> params, optimizerState;
  Outcome current;
  std::thread writer;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_BACKGROUNDSAVE_H
