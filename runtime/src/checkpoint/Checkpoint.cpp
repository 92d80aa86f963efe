//===- Checkpoint.cpp - Atomic training checkpoints -------------*- C++ -*-===//
//
// Save: write files into PATH.tmp, fsync, swap into place (Checkpoint.h
// explains why each instant is safe). Loading is CheckpointLoad.cpp.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Checkpoint.h"
#include "checkpoint/CheckpointLayout.h"
#include "checkpoint/PerRankSave.h"
#include "loom/Version.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/SafeTensors.h"
#include "loom/runtime/Sha256.h"
#include "support/FileUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace loom::rt {

namespace {

/// Saves started by this process, for LOOM_TEST_CRASH_IN_SAVE (a background
/// save counts on its writer thread).
std::atomic<int> savesStarted{0};

/// The test hook of Checkpoint.h: dies at `stage` ("write" or "swap") of the
/// save the environment names.
void crashPointForTests(const char *stage) {
  const char *spec = std::getenv("LOOM_TEST_CRASH_IN_SAVE");
  if (!spec || !*spec)
    return;
  char *end = nullptr;
  long save = std::strtol(spec, &end, 10);
  const char *wanted = *end == ':' ? end + 1 : "write";
  if (save == savesStarted && std::strcmp(wanted, stage) == 0) {
    std::fprintf(stderr,
                 "LOOM_TEST_CRASH_IN_SAVE: killing pid %d in save %d "
                 "at stage %s\n",
                 static_cast<int>(getpid()), savesStarted.load(), stage);
    std::fflush(stderr);
    std::raise(SIGKILL);
  }
}

void renameOrFail(const std::string &from, const std::string &to) {
  if (std::rename(from.c_str(), to.c_str()) != 0)
    fail("cannot rename %s to %s: %s", from.c_str(), to.c_str(),
         std::strerror(errno));
}

void removeOrFail(const std::string &path) {
  std::error_code error;
  fs::remove_all(path, error);
  if (error)
    fail("cannot remove %s: %s", path.c_str(), error.message().c_str());
}

bool isCheckpointDir(const std::string &path) {
  std::error_code error;
  return fs::is_directory(path, error) &&
         (fs::exists(path + "/" + kTrainerFile, error) ||
          fs::is_empty(path, error));
}

/// The record of file `name` of `dir`, hashed here.
FileRecord recordOf(const std::string &dir, const std::string &name) {
  std::string path = dir + "/" + name;
  std::error_code error;
  uint64_t bytes = fs::file_size(path, error);
  if (error)
    fail("cannot read %s: %s", path.c_str(), error.message().c_str());
  return {name, sha256FileHex(path), bytes};
}

/// What trainer.json says of a checkpoint beyond the trainer state and the
/// files: the params' fingerprint and, for a per-rank one, its kind
/// ("per_rank") and the fields that come with it.
struct CheckpointKind {
  json model;
  const char *perRank = nullptr;
  json fields = json::object();
};

/// trainer.json for `files` (hashed here) and `known` (hashed by whoever
/// wrote them).
void writeTrainerJson(const std::string &dir,
                      const std::vector<std::string> &files,
                      const CheckpointKind &kind, const TrainerState &state,
                      const std::vector<FileRecord> &known = {}) {
  json records = json::object();
  std::vector<FileRecord> all = known;
  for (const std::string &name : files)
    all.push_back(recordOf(dir, name));
  for (const FileRecord &record : all)
    records[record.name] = {{"sha256", record.sha256}, {"bytes", record.bytes}};
  nlohmann::ordered_json trainer = {
      {"format_version",
       kind.perRank ? kCheckpointFormatVersion : kReplicatedFormatVersion},
      {"step", state.step},
      {"data_position", state.dataPosition},
      {"seed", state.seed},
      {"shuffle", state.shuffle},
      {"data", state.data},
      {"ranks", state.ranks}};
  if (state.rowsPerStep > 0)
    trainer["rows_per_step"] = state.rowsPerStep;
  if (kind.perRank)
    trainer["per_rank"] = kind.perRank;
  for (const auto &[key, value] : kind.fields.items())
    trainer[key] = value;
  trainer["model"] = kind.model;
  trainer["files"] = records;
  // Which build wrote it, for whoever wonders later (not read back).
  trainer["written_by"] = LOOM_VERSION_STRING;
  writeFileDurable(dir + "/" + kTrainerFile, trainer.dump(2) + "\n");
  syncDirectory(dir);
}

/// Rank 0's end of a per-rank save, after every rank wrote its files
/// (`rankFiles` of rank r; `records` from the ranks) and it wrote the
/// model: checks that every rank's files are there as big as their writers
/// said, then writes trainer.json.
void finishRankFiles(
    const std::string &tmpDir, const CheckpointKind &kind,
    const TrainerState &state, const std::vector<FileRecord> &records,
    const std::function<std::vector<std::string>(int)> &rankFiles) {
  std::map<std::string, const FileRecord *> byName;
  for (const FileRecord &record : records)
    byName[record.name] = &record;
  // Every rank's files, as big as their writers said: a rank that wrote
  // into a directory of its own (a save path on a filesystem the ranks do
  // not share) would leave the checkpoint without them.
  for (int r = 0; r < state.ranks; ++r)
    for (const std::string &name : rankFiles(r)) {
      std::string path = tmpDir + "/" + name;
      std::error_code error;
      auto record = byName.find(name);
      if (record == byName.end())
        fail("rank %d sent no record of %s", r, name.c_str());
      if (!fs::is_regular_file(path, error) ||
          fs::file_size(path, error) != record->second->bytes)
        fail("%s is missing or not as rank %d wrote it: every rank writes "
             "its part of a per-rank checkpoint into %s, so the save path "
             "must be on a filesystem all ranks share",
             path.c_str(), r, tmpDir.c_str());
    }
  writeTrainerJson(tmpDir, {kModelFile}, kind, state, records);
}

} // namespace

std::string checkpointTempPath(const std::string &path) {
  return trimSlashes(path) + ".tmp";
}

void writeCheckpointFiles(const std::string &dir, Artifact &artifact,
                          const TrainerState &state) {
  writeCheckpointFiles(dir, artifact.params(), artifact.state(), state);
}

void writeCheckpointFiles(const std::string &dir,
                          const std::vector<Tensor *> &params,
                          const std::vector<Tensor *> &optimizerState,
                          const TrainerState &state) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error)
    fail("cannot create checkpoint directory %s: %s", dir.c_str(),
         error.message().c_str());
  std::string modelPath = dir + "/" + kModelFile;
  std::string optimizerPath = dir + "/" + kOptimizerFile;
  // "format": "pt" lets Hugging Face tooling load the weights as PyTorch's.
  writeSafeTensors(modelPath, tensorViews(params),
                   {{"format", "pt"}, {"generator", "loom"}});
  crashPointForTests("write");
  writeSafeTensors(optimizerPath, tensorViews(optimizerState),
                   {{"format", "pt"}, {"generator", "loom"}});

  writeTrainerJson(dir, {kModelFile, kOptimizerFile},
                   {modelFingerprint(tensorViews(params))}, state);
}

std::string beginPerRankCheckpoint(const std::string &path) {
  checkSaveTarget(path);
  std::string tmp = checkpointTempPath(trimSlashes(path));
  std::error_code error;
  if (fs::exists(tmp, error))
    removeOrFail(tmp); // a save that died earlier
  fs::create_directories(tmp, error);
  if (error)
    fail("cannot create checkpoint directory %s: %s", tmp.c_str(),
         error.message().c_str());
  return tmp;
}

std::vector<Tensor *> alikeShare(const std::vector<Tensor *> &alike, int rank,
                                 int ranks) {
  // Contiguous runs of about equal bytes: tensor i is in the run whose
  // range of the running byte count holds its middle. The runs go to the
  // ranks last to first: rank 0 also writes the consensus model, and the
  // last tensors (CO2's round buffer, a whole model) may make one run
  // larger than the others.
  double total = 0;
  for (const Tensor *t : alike)
    total += static_cast<double>(t->byteSize());
  std::vector<Tensor *> share;
  double before = 0;
  for (Tensor *t : alike) {
    const double middle = before + static_cast<double>(t->byteSize()) / 2;
    before += static_cast<double>(t->byteSize());
    int run = total > 0 ? static_cast<int>(middle / total * ranks) : 0;
    if (ranks - 1 - std::min(run, ranks - 1) == rank)
      share.push_back(t);
  }
  return share;
}

std::vector<SafeTensorView> tensorViews(const std::vector<Tensor *> &tensors) {
  std::vector<SafeTensorView> result;
  for (const Tensor *tensor : tensors)
    result.push_back(makeSafeTensorView(tensor->name(), tensor->dtype(),
                                        tensor->shape(), tensor->data()));
  return result;
}

json modelFingerprint(const std::vector<SafeTensorView> &params) {
  json list = json::array();
  for (const SafeTensorView &param : params)
    list.push_back({{"name", param.name},
                    {"shape", param.shape},
                    {"dtype", dtypeName(*param.dtype)}});
  return list;
}

std::vector<FileRecord> writeRankFiles(const std::string &tmpDir, int rank,
                                       const std::vector<RankFile> &files) {
  ++savesStarted;
  std::string dir = tmpDir + "/" + rankDir(rank);
  std::error_code error;
  fs::create_directories(dir, error);
  if (error)
    fail("cannot create checkpoint directory %s: %s", dir.c_str(),
         error.message().c_str());
  for (size_t i = 0; i < files.size(); ++i) {
    writeSafeTensors(tmpDir + "/" + files[i].name, files[i].tensors,
                     files[i].metadata);
    if (i == 0)
      crashPointForTests("write");
  }
  syncDirectory(dir);
  std::vector<FileRecord> records;
  for (const RankFile &file : files)
    records.push_back(recordOf(tmpDir, file.name));
  return records;
}

std::vector<FileRecord>
writeRankCheckpointFiles(const std::string &tmpDir, int rank,
                         const std::vector<Tensor *> &params,
                         const PerRankTensors &tensors) {
  std::vector<std::string> names = rankFiles(rank, kCheckpointFormatVersion);
  const std::map<std::string, std::string> meta = {{"format", "pt"},
                                                   {"generator", "loom"}};
  return writeRankFiles(tmpDir, rank,
                        {{names[0], tensorViews(params), meta},
                         {names[1], tensorViews(tensors.optimizerState), meta},
                         {names[2], tensorViews(tensors.rankState), meta},
                         {names[3], tensorViews(tensors.alike), meta}});
}

void finishPerRankCheckpoint(const std::string &tmpDir,
                             const std::vector<Tensor *> &consensus,
                             const TrainerState &state,
                             const std::vector<FileRecord> &rankRecords) {
  writeSafeTensors(tmpDir + "/" + kModelFile, tensorViews(consensus),
                   {{"format", "pt"}, {"generator", "loom"}});
  finishRankFiles(
      tmpDir, {modelFingerprint(tensorViews(consensus)), kPerRankKind}, state,
      rankRecords,
      [](int rank) { return rankFiles(rank, kCheckpointFormatVersion); });
}

void finishZeroCheckpoint(const std::string &tmpDir, const json &model,
                          const json &zero, const TrainerState &state,
                          const std::vector<FileRecord> &rankRecords) {
  const int64_t stage = zero.at("stage").get<int64_t>();
  finishRankFiles(tmpDir, {model, kZeroKind, {{"zero", zero}}}, state,
                  rankRecords,
                  [stage](int rank) { return zeroRankFiles(rank, stage); });
}

void commitCheckpoint(const std::string &tmpDir, const std::string &path) {
  std::string target = trimSlashes(path);
  std::string old = oldPath(target);
  std::string parent = parentDirectory(target);
  std::error_code error;
  if (fs::exists(target, error)) {
    // PATH is complete whenever it exists, so an older PATH.old is redundant.
    if (fs::exists(old, error))
      removeOrFail(old);
    renameOrFail(target, old);
    crashPointForTests("swap");
  }
  renameOrFail(tmpDir, target);
  syncDirectory(parent);
  if (fs::exists(old, error))
    removeOrFail(old);
}

namespace {

/// Whether `relative`, a path inside a checkpoint directory, is a file a
/// checkpoint writes there (CheckpointLayout.h).
bool isCheckpointFile(const std::string &relative) {
  if (relative == kModelFile || relative == kOptimizerFile ||
      relative == kTrainerFile)
    return true;
  // A CO2 rank's files; the exact comparison below rejects any spelling of
  // the rank that sscanf is lenient about.
  int rank = -1;
  if (std::sscanf(relative.c_str(), "rank-%d/", &rank) != 1 || rank < 0)
    return false;
  std::vector<std::string> files = rankFiles(rank, kCheckpointFormatVersion);
  return std::find(files.begin(), files.end(), relative) != files.end();
}

/// What in checkpoint directory `dir` a checkpoint does not write (paths
/// relative to `dir`), which replacing it would delete.
std::vector<std::string> foreignFiles(const std::string &dir) {
  std::vector<std::string> foreign;
  // With error codes throughout: a rank may look while rank 0 swaps the
  // previous save in, and a directory that vanishes has nothing to lose.
  std::error_code error;
  for (fs::recursive_directory_iterator it(dir, error), end;
       !error && it != end; it.increment(error)) {
    const std::string relative = it->path().lexically_relative(dir).string();
    const fs::file_type type = it->symlink_status(error).type();
    // A rank's directory is the one that holds its model.
    const bool known =
        type == fs::file_type::directory
            ? it.depth() == 0 && isCheckpointFile(relative + "/" + kModelFile)
            : type == fs::file_type::regular && isCheckpointFile(relative);
    if (known)
      continue;
    foreign.push_back(relative);
    if (type == fs::file_type::directory)
      it.disable_recursion_pending();
  }
  std::sort(foreign.begin(), foreign.end());
  return foreign;
}

} // namespace

void checkSaveTarget(const std::string &path) {
  std::string target = trimSlashes(path);
  std::error_code error;
  // Never rename away something that is not ours.
  if (fs::exists(target, error) && !isCheckpointDir(target))
    fail("cannot save a checkpoint to %s: it exists and is not a Loom "
         "checkpoint directory",
         target.c_str());
  // Nor what someone put into a checkpoint: the save replaces the directory
  // whole (atomically), which deleted it.
  if (!fs::exists(target, error))
    return;
  std::vector<std::string> foreign = foreignFiles(target);
  if (foreign.empty())
    return;
  std::string names;
  for (size_t i = 0; i < foreign.size() && i < 3; ++i)
    names += (i ? ", " : "") + foreign[i];
  if (foreign.size() > 3)
    names += ", ... (" + std::to_string(foreign.size()) + " in all)";
  fail("cannot save a checkpoint to %s: it holds %s, which %s not written by "
       "a checkpoint and would be deleted when the new checkpoint replaces "
       "the directory; move %s elsewhere, or save to another PATH",
       target.c_str(), names.c_str(), foreign.size() == 1 ? "is" : "are",
       foreign.size() == 1 ? "it" : "them");
}

void checkCanSaveTo(const std::string &path) {
  checkSaveTarget(path);
  // A save creates PATH.tmp and its missing parents, so the nearest existing
  // ancestor of PATH must take a new directory. Probing it now, with a
  // directory removed at once, turns "read-only disk" or "no such place"
  // into an error before training rather than at the first save hours in.
  std::error_code error;
  fs::path dir = fs::absolute(trimSlashes(path), error).parent_path();
  // (An ancestor that cannot be looked into ends the climb: the probe
  // there says why.)
  while (!fs::exists(dir, error) && !error && dir.has_relative_path())
    dir = dir.parent_path();
  // mkdtemp's unique name keeps apart the ranks and jobs that share it.
  std::string probe = (dir / ".loom-save-probe-XXXXXX").string();
  if (!::mkdtemp(probe.data())) {
    const int why = errno;
    fail("cannot save checkpoints to %s: cannot create a directory in %s: %s",
         trimSlashes(path).c_str(), dir.c_str(), std::strerror(why));
  }
  ::rmdir(probe.c_str());
}

void saveCheckpoint(const std::string &path, Artifact &artifact,
                    const TrainerState &state) {
  saveCheckpoint(path, artifact.params(), artifact.state(), state);
}

void saveCheckpoint(const std::string &path,
                    const std::vector<Tensor *> &params,
                    const std::vector<Tensor *> &optimizerState,
                    const TrainerState &state) {
  checkSaveTarget(path);
  ++savesStarted;
  std::string target = trimSlashes(path);
  std::error_code error;
  std::string tmp = checkpointTempPath(target);
  if (fs::exists(tmp, error))
    removeOrFail(tmp); // a save that died earlier
  writeCheckpointFiles(tmp, params, optimizerState, state);
  commitCheckpoint(tmp, target);
}

} // namespace loom::rt
