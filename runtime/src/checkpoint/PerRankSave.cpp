//===- PerRankSave.cpp - Writing a per-rank checkpoint ----------*- C++ -*-===//
//
// Write and hash, average (CO2) or gather (ZeRO-3), exchange, commit: one
// all-reduce per consensus tensor, or one all-gather per sharded param, and
// one all-gather of every rank's outcome and file records, the same on
// every rank whatever failed.
//
//===----------------------------------------------------------------------===//

#include "checkpoint/PerRankSave.h"
#include "checkpoint/CheckpointLayout.h"
#include "checkpoint/ZeroShards.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Checkpoint.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/World.h"
#include "testhooks/TestHooks.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace loom::rt {

namespace {

/// Files a rank writes: CO2's model, optimizer, its own state and its share
/// of the state every rank holds alike (Checkpoint.h); ZeRO's shards are
/// fewer (ZeroShards.h).
constexpr size_t kFilesPerRank = 4;
/// One record as int64 words: the size, 64 hex digits, the name (up to 64
/// bytes, NUL-padded).
constexpr size_t kNameWords = 8, kDigestWords = 8;
constexpr size_t kRecordWords = 1 + kDigestWords + kNameWords;
/// A rank's part of the exchange: whether it failed, then its records.
constexpr size_t kRankWords = 1 + kFilesPerRank * kRecordWords;

/// `text` (checked to fit: fits()) into `count` words.
void putText(int64_t *words, size_t count, const std::string &text) {
  std::memcpy(words, text.data(), std::min(text.size(), count * 8));
}

/// Fails unless `records` travel whole in a rank's part of the exchange.
void checkFits(const std::vector<FileRecord> &records) {
  if (records.size() > kFilesPerRank)
    fail("a rank wrote %zu checkpoint files; the exchange holds %zu",
         records.size(), kFilesPerRank);
  for (const FileRecord &record : records)
    if (record.name.size() > kNameWords * 8 ||
        record.sha256.size() != kDigestWords * 8)
      fail("checkpoint file record %s does not fit the exchange",
           record.name.c_str());
}

std::string getText(const int64_t *words, size_t count) {
  const char *bytes = reinterpret_cast<const char *>(words);
  return std::string(bytes, strnlen(bytes, count * 8));
}

/// This rank's part of the exchange.
std::vector<int64_t> pack(bool failed, const std::vector<FileRecord> &records) {
  std::vector<int64_t> words(kRankWords, 0);
  words[0] = failed ? 1 : 0;
  for (size_t i = 0; i < records.size() && i < kFilesPerRank; ++i) {
    int64_t *at = words.data() + 1 + i * kRecordWords;
    at[0] = static_cast<int64_t>(records[i].bytes);
    putText(at + 1, kDigestWords, records[i].sha256);
    putText(at + 1 + kDigestWords, kNameWords, records[i].name);
  }
  return words;
}

std::vector<FileRecord> unpack(const std::vector<int64_t> &all, int ranks) {
  std::vector<FileRecord> records;
  for (int r = 0; r < ranks; ++r)
    for (size_t i = 0; i < kFilesPerRank; ++i) {
      const int64_t *at = all.data() + r * kRankWords + 1 + i * kRecordWords;
      FileRecord record;
      record.bytes = static_cast<uint64_t>(at[0]);
      record.sha256 = getText(at + 1, kDigestWords);
      record.name = getText(at + 1 + kDigestWords, kNameWords);
      if (!record.name.empty())
        records.push_back(record);
    }
  return records;
}

/// After each rank wrote its part (`error`: its failure; `records`: its
/// files'): the ranks exchange both and, if no part failed, rank 0 runs
/// `finish` with every rank's records and commits `tmpDir` to `path`.
PerRankWrite agreeAndCommit(
    Communicator &comm, const std::string &tmpDir, const std::string &path,
    const std::string &error, const std::vector<FileRecord> &records,
    const std::function<void(const std::vector<FileRecord> &)> &finish) {
  PerRankWrite result;
  result.error = error;
  std::vector<int64_t> mine = pack(!error.empty(), records);
  std::vector<int64_t> all(kRankWords * comm.size());
  comm.allGather(mine.data(), all.data(), static_cast<int64_t>(kRankWords),
                 DType::I64);
  bool anyFailed = false;
  for (int r = 0; r < comm.size(); ++r)
    anyFailed = anyFailed || all[r * kRankWords] != 0;
  if (comm.isRoot() && !anyFailed) {
    try {
      finish(unpack(all, comm.size()));
      commitCheckpoint(tmpDir, path);
      result.committed = true;
    } catch (const std::exception &e) {
      result.error = e.what();
    }
  }
  return result;
}

} // namespace

PerRankWrite writePerRankCheckpoint(Communicator &comm,
                                    const std::string &tmpDir,
                                    const std::string &path,
                                    const RankPart &part,
                                    const TrainerState &state) {
  std::string error;
  std::vector<FileRecord> records;
  try {
    failRankSaveForTests(state.step, comm.rank());
    records = writeRankCheckpointFiles(tmpDir, comm.rank(), part.params,
                                       part.tensors);
    checkFits(records);
  } catch (const std::exception &e) {
    error = e.what();
    records.clear();
  }
  for (Tensor *t : part.consensus)
    comm.allReduce(t->data(), t->numElements(), t->dtype(), ReduceOp::Mean);
  return agreeAndCommit(comm, tmpDir, path, error, records,
                        [&](const std::vector<FileRecord> &all) {
                          finishPerRankCheckpoint(tmpDir, part.consensus, state,
                                                  all);
                        });
}

PerRankWrite writeZeroCheckpoint(Communicator &comm, const std::string &tmpDir,
                                 const std::string &path, const ZeroPart &part,
                                 const TrainerState &state) {
  const Manifest &manifest = *part.manifest;
  // The gathers' buffers hold zero.ranks slices; every rank fails alike.
  checkZeroJob(manifest, comm.size(), /*external=*/false);
  std::string error;
  std::vector<FileRecord> records;
  try {
    failRankSaveForTests(state.step, comm.rank());
    records = writeZeroRankFiles(tmpDir, comm.rank(), part, state);
    checkFits(records);
  } catch (const std::exception &e) {
    error = e.what();
    records.clear();
  }
  if (manifest.zero.stage == 3)
    writeGatheredModel(comm, part, tmpDir + "/" + kModelFile, error);
  return agreeAndCommit(comm, tmpDir, path, error, records,
                        [&](const std::vector<FileRecord> &all) {
                          finishZeroCheckpoint(
                              tmpDir, modelFingerprint(wholeParams(manifest)),
                              zeroRecord(manifest), state, all);
                        });
}

} // namespace loom::rt
