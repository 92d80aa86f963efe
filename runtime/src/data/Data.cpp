//===- Data.cpp - Batch sources for the artifact inputs ---------*- C++ -*-===//
//
// Token-file sources (text:, tokens:) and the source factory. The synthetic
// sources live in SyntheticData.cpp, and binding the batch buffers to an
// artifact in BatchBuffers.cpp.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Data.h"
#include "data/Documents.h"
#include "data/SyntheticData.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Progress.h"
#include "loom/runtime/Random.h"
#include "support/FileUtil.h"

namespace loom::rt {

DataSource::~DataSource() = default;

namespace {

/// The document starts of a file read as one document.
const std::vector<int64_t> kOneDocument{0};

/// text:PATH (one byte per token) or tokens:PATH (little-endian uint16).
class TokenFileSource final : public DataSource {
public:
  TokenFileSource(const std::string &spec, const std::string &path, bool bytes,
                  const DataOptions &options, const TaskSpec &task)
      : spec(spec), file(path), bytes(bytes), options(options), task(task) {
    if (!bytes && file.size() % 2 != 0)
      fail("%s: the file has %zu bytes, which is not a whole number of "
           "uint16 tokens",
           spec.c_str(), file.size());
    count = static_cast<int64_t>(bytes ? file.size() : file.size() / 2);
    windows = streamWindows(spec, count, task.seq);
    checkVocab();
  }

  void fill(int64_t k, const BatchBuffers &out) override {
    const int64_t batch = task.batch, seq = task.seq;
    const int64_t firstRow = globalRow(options, k, batch, 0);
    for (int64_t i = 0; i < batch; ++i) {
      const int64_t start = windowStart(options, firstRow + i, count, seq);
      int32_t *tokens = out.tokens + i * seq;
      int32_t *targets = out.targets + i * seq;
      for (int64_t t = 0; t < seq; ++t) {
        tokens[t] = tokenAt(start + t);
        targets[t] = tokenAt(start + t + 1);
      }
      // A model with document inputs reading a plain file: the file is
      // one document.
      if (out.segments)
        fillDocumentRow(kOneDocument, start, seq, out.segments + i * seq,
                        out.positions + i * seq);
    }
  }

  std::string describe() const override {
    return spec + " (" + formatCount(static_cast<double>(count)) + " tokens, " +
           (options.shuffle ? "shuffled windows"
                            : std::to_string(windows) + " sequential windows") +
           ")";
  }

  int64_t rowsPerPass() const override { return options.shuffle ? 0 : windows; }

private:
  int32_t tokenAt(int64_t i) const {
    if (bytes)
      return file.data()[i];
    const unsigned char *p = file.data() + 2 * i;
    return static_cast<int32_t>(p[0] | (p[1] << 8));
  }

  void checkVocab() const {
    for (int64_t i = 0; i < count; ++i) {
      int32_t token = tokenAt(i);
      if (token < task.vocab)
        continue;
      if (bytes)
        fail("%s: byte 0x%02X at offset %lld is not below the model's vocab "
             "%lld; text: data uses raw bytes 0-255 as tokens, so it needs a "
             "model with vocab >= 256 (or use tokens:PATH)",
             spec.c_str(), static_cast<unsigned>(token),
             static_cast<long long>(i), static_cast<long long>(task.vocab));
      fail("%s: token %d at index %lld is not below the model's vocab %lld",
           spec.c_str(), token, static_cast<long long>(i),
           static_cast<long long>(task.vocab));
    }
  }

  std::string spec;
  MappedFile file;
  bool bytes;
  DataOptions options;
  TaskSpec task;
  int64_t count = 0;
  int64_t windows = 0;
};

/// For task none: seeded N(0,1) floats, zero integers, per (seed, name, k).
class TaskNoneSource final : public DataSource {
public:
  explicit TaskNoneSource(const DataOptions &options) : options(options) {}

  void fill(int64_t k, const BatchBuffers &out) override {
    const int64_t globalBatch = k * options.worldSize + options.rank;
    for (Tensor *input : out.others) {
      CounterRng rng =
          CounterRng::forName(options.seed, "synthetic." + input->name())
              .substream(static_cast<uint64_t>(globalBatch));
      for (int64_t i = 0; i < input->numElements(); ++i) {
        rng.seek(2 * static_cast<uint64_t>(i));
        input->set(i, isFloat(input->dtype()) ? rng.normal() : 0.0);
      }
    }
  }

  std::string describe() const override {
    return "synthetic (task none: any inputs get seeded N(0,1) values)";
  }

private:
  DataOptions options;
};

} // namespace

std::string dataSpecProblem(const std::string &spec) {
  std::string kind = spec.substr(0, spec.find(':'));
  if (kind == "synthetic-docs")
    return syntheticDocsProblem(spec);
  bool isFile = kind == "text" || kind == "tokens" || kind == "docs";
  if (spec != "synthetic" && !isFile)
    return "unknown data source '" + spec +
           "' (expected synthetic, text:PATH, tokens:PATH, docs:PATH or "
           "synthetic-docs[:median=N,sigma=S,count=N])";
  if (isFile && spec.size() == kind.size() + 1)
    return spec + " needs a " + (kind == "docs" ? "directory or JSONL " : "") +
           "file path, e.g. --data " + kind + ":corpus." +
           (kind == "text"   ? "txt"
            : kind == "docs" ? "jsonl"
                             : "bin");
  if (isFile && spec.find(':') == std::string::npos)
    return spec + " needs a file path, e.g. --data " + kind + ":PATH";
  return "";
}

std::unique_ptr<DataSource> makeDataSource(const DataOptions &options,
                                           const TaskSpec &task) {
  const std::string &spec = options.spec;
  if (std::string problem = dataSpecProblem(spec); !problem.empty())
    fail("%s", problem.c_str());
  std::string kind = spec.substr(0, spec.find(':'));

  switch (task.kind) {
  case TaskSpec::Kind::None:
    if (spec != "synthetic")
      fail("--data %s: this model (task none) reads no data set; leave "
           "--data out",
           spec.c_str());
    return std::make_unique<TaskNoneSource>(options);
  case TaskSpec::Kind::Classify:
    if (spec != "synthetic")
      fail("--data %s: task classify can only use --data synthetic "
           "(text:, tokens:, docs: and synthetic-docs supply tokens for lm "
           "models)",
           spec.c_str());
    return makeSyntheticClassifySource(options, task);
  case TaskSpec::Kind::LM:
    if (task.partitioned && kind != "docs" && kind != "synthetic-docs")
      fail("--data %s: this model places documents on the ranks "
           "(--partition-sequences) and reads them from docs:PATH or "
           "synthetic-docs[:...] only",
           spec.c_str());
    if (spec == "synthetic")
      return makeSyntheticLMSource(options, task);
    if (kind == "docs" || kind == "synthetic-docs")
      return makeDocumentSource(options, task);
    return std::make_unique<TokenFileSource>(spec, spec.substr(kind.size() + 1),
                                             kind == "text", options, task);
  }
  fail("unsupported task");
}

} // namespace loom::rt
