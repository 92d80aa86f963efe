//===- PerRankSave.cpp - Writing a per-rank checkpoint ----------*- C++ -*-===//
//
// Write and hash, average, exchange, commit: one all-reduce per consensus
// tensor and one all-gather of every rank's outcome and file records, the
// same on every rank whatever failed.
//
//===----------------------------------------------------------------------===//

#include "checkpoint/PerRankSave.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Checkpoint.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "testhooks/TestHooks.h"

#include <algorithm>
#include <cstring>

namespace loom::rt {

namespace {

/// Files a rank writes (Checkpoint.h: model, optimizer, its own state, its
/// share of the state every rank holds alike).
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

} // namespace

PerRankWrite writePerRankCheckpoint(Communicator &comm,
                                    const std::string &tmpDir,
                                    const std::string &path,
                                    const RankPart &part,
                                    const TrainerState &state) {
  PerRankWrite result;
  std::vector<FileRecord> records;
  try {
    failRankSaveForTests(state.step, comm.rank());
    records = writeRankCheckpointFiles(tmpDir, comm.rank(), part.params,
                                       part.tensors);
    checkFits(records);
  } catch (const std::exception &e) {
    result.error = e.what();
    records.clear();
  }
  for (Tensor *t : part.consensus)
    comm.allReduce(t->data(), t->numElements(), t->dtype(), ReduceOp::Mean);
  std::vector<int64_t> mine = pack(!result.error.empty(), records);
  std::vector<int64_t> all(kRankWords * comm.size());
  comm.allGather(mine.data(), all.data(), static_cast<int64_t>(kRankWords),
                 DType::I64);
  bool anyFailed = false;
  for (int r = 0; r < comm.size(); ++r)
    anyFailed = anyFailed || all[r * kRankWords] != 0;
  if (comm.isRoot() && !anyFailed) {
    try {
      finishPerRankCheckpoint(tmpDir, part.consensus, state,
                              unpack(all, comm.size()));
      commitCheckpoint(tmpDir, path);
      result.committed = true;
    } catch (const std::exception &e) {
      result.error = e.what();
    }
  }
  return result;
}

} // namespace loom::rt
