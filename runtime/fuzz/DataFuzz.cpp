//===- DataFuzz.cpp - Fuzz target: the text: and tokens: sources -*- C++ -*-=//
//
// Writes the input to a file (one per process, rewritten for each input), opens
// it as text: and as tokens: data for a few small lm tasks, sequential and
// shuffled, on one rank and as rank 1 of several, and fills three batches of
// each into local buffers (ASan sees any read past the mapped file or write
// past a buffer). What is accepted must be valid batches: every token below the
// vocab, and the targets the tokens shifted by one.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"
#include "loom/runtime/Data.h"

#include <cstdint>
#include <memory>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

using namespace loom::rt;
using loom::fuzz::violated;

namespace {

/// The file the sources read: an in-memory file (no file system, whose
/// block allocation would slow each input down severalfold) under its
/// /proc/self/fd name.
class InputFile {
public:
  InputFile() {
    fd = ::memfd_create("loom-fuzz-data", MFD_CLOEXEC);
    if (fd < 0)
      violated("memfd_create failed");
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  ~InputFile() { ::close(fd); }

  void write(const uint8_t *data, size_t size) {
    bool ok = ::ftruncate(fd, 0) == 0;
    size_t done = 0;
    while (ok && done < size) {
      ssize_t wrote = ::pwrite(fd, data + done, size - done, done);
      ok = wrote > 0;
      done += ok ? static_cast<size_t>(wrote) : 0;
    }
    if (!ok)
      violated("cannot write " + path);
  }

  std::string path;

private:
  int fd = -1;
};

struct Config {
  const char *kind;
  int64_t batch, seq, vocab;
  bool shuffle;
  int rank, worldSize;
};

// vocab 300 takes any text; 128 rejects non-ASCII bytes; 50000 and 1000
// reject some uint16 tokens.
const Config kConfigs[] = {
    {"text", 2, 4, 300, false, 0, 1},     {"text", 2, 4, 300, true, 0, 1},
    {"text", 1, 1, 128, false, 1, 2},     {"tokens", 2, 4, 50000, false, 0, 1},
    {"tokens", 2, 4, 50000, true, 0, 1},  {"tokens", 3, 7, 1000, true, 1, 3},
    {"tokens", 1, 1, 50000, false, 2, 4},
};

/// Batches from the start, from the second, and far out (wrapping around).
const int64_t kBatches[] = {0, 1, 1000003};

void run(const Config &config, const std::string &path, uint64_t seed) {
  TaskSpec task;
  task.kind = TaskSpec::Kind::LM;
  task.batch = config.batch;
  task.seq = config.seq;
  task.vocab = config.vocab;
  DataOptions options;
  options.spec = std::string(config.kind) + ":" + path;
  options.seed = seed;
  options.shuffle = config.shuffle;
  options.rank = config.rank;
  options.worldSize = config.worldSize;
  try {
    std::unique_ptr<DataSource> source = makeDataSource(options, task);
    if (source->describe().empty())
      violated("describe() is empty");
    if (source->rowsPerPass() < 0)
      violated("negative rowsPerPass()");
    const int64_t n = task.batch * task.seq;
    std::vector<int32_t> tokens(n, -1), targets(n, -1);
    BatchBuffers buffers;
    buffers.tokens = tokens.data();
    buffers.targets = targets.data();
    for (int64_t k : kBatches) {
      source->fill(k, buffers);
      for (int64_t i = 0; i < n; ++i) {
        if (tokens[i] < 0 || tokens[i] >= task.vocab || targets[i] < 0 ||
            targets[i] >= task.vocab)
          violated(options.spec + ": a token outside the vocab");
        if (i % task.seq != task.seq - 1 && targets[i] != tokens[i + 1])
          violated(options.spec + ": the targets are not the shifted tokens");
      }
    }
  } catch (const Error &error) {
    loom::fuzz::checkNamesSource(error, path);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static InputFile file;
  file.write(data, size);
  // The shuffle seed comes from the input, so the fuzzer explores it too.
  uint64_t seed = size;
  for (size_t i = 0; i < size && i < 8; ++i)
    seed = seed * 131 + data[i];
  for (const Config &config : kConfigs)
    run(config, file.path, seed);
  return 0;
}
