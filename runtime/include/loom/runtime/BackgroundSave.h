//===- BackgroundSave.h - Checkpoints written while training goes on ------===//
//
// `loom-run --save-async` (docs/reliability.md, scenario 13). When a
// save is due the state is copied (a memcpy, tens of milliseconds for
// hundreds of MB) and a thread of its own writes the copy as a synchronous
// save does (temporary directory, sha256, fsync, swap), while the next
// steps run. The copy is what the save holds, whatever the steps do to the
// params meanwhile. It is kept for the next save, which overwrites it
// (copyTensors): memory does not grow over saves, and its pages are not
// faulted in again each time (on a 2-core VM that made a background save
// of a 2-rank CO2 job slower than a synchronous one). One save at a time: the
// next waits for the one in flight, and so does the end of training; a failed
// write is reported then. Until a save is committed the previous checkpoint
// stays the latest, so a crash at any point loses no more than the steps since
// that one.
//
// A replicated checkpoint is written by rank 0 alone (start). A per-rank
// one is written by a writer on every rank, over a communicator of their
// own (Communicator::duplicate), so that their collectives never meet the
// training's: CO2's writers (startPerRank) average their copies into the
// consensus model and agree before rank 0's commits; ZeRO's (startZero)
// write their shards, gather a ZeRO-3 model for rank 0 to write, and agree
// likewise.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_BACKGROUNDSAVE_H
#define LOOM_RUNTIME_BACKGROUNDSAVE_H

#include "loom/runtime/Checkpoint.h"

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace loom::rt {

class Artifact;
class Communicator;
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
    /// The write's error on this rank; "" when it succeeded. A per-rank
    /// save that another rank's writer failed has none here (that rank
    /// has it) and is not committed.
    std::string error;
    /// Whether this process committed the checkpoint (rank 0).
    bool committed = false;
    /// A per-rank checkpoint's rank count (0: a replicated one).
    int localModels = 0;
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
  /// The same for tensors named and shaped like the artifact's params and
  /// state.
  void start(const std::string &path, const std::vector<Tensor *> &params,
             const std::vector<Tensor *> &optimizerState,
             const TrainerState &state);

  /// Every rank of a per-rank checkpoint, after rank 0 created `tmpDir`
  /// (beginPerRankCheckpoint): copies `artifact`'s params and `tensors`
  /// (with this rank's share of the alike ones: alikeShare), and starts
  /// writing them (writePerRankCheckpoint) over `writers`, which only the
  /// writer threads use and which must outlive the save. The save in flight
  /// must have been finished.
  void startPerRank(const std::string &path, const std::string &tmpDir,
                    Artifact &artifact, const PerRankTensors &tensors,
                    const TrainerState &state, Communicator &writers);

  /// Every rank of a ZeRO job, after rank 0 created `tmpDir`
  /// (beginPerRankCheckpoint): copies this rank's slices of `artifact`'s
  /// state (and of its params at stage 3; rank 0 copies the whole params
  /// below it) and starts writing them (writeZeroCheckpoint, ZeroShards.h)
  /// over `writers`, as startPerRank does.
  void startZero(const std::string &path, const std::string &tmpDir,
                 Artifact &artifact, const TrainerState &state,
                 Communicator &writers);

  bool inFlight() const { return writer.joinable(); }

private:
  /// Fails if a save is in flight: its copies are still being written.
  void checkIdle() const;
  /// Records a save of `state` to `path` as in flight and runs `write` on
  /// the writer thread (an exception it throws is the save's error).
  void launch(const std::string &path, const TrainerState &state,
              int localModels, std::function<void(Outcome &)> write);

  /// Copies of the state a save holds, kept for the next save.
  std::vector<std::unique_ptr<Tensor>> params, optimizerState, rankState,
      alikeState;
  Outcome current;
  std::thread writer;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_BACKGROUNDSAVE_H
