//===- FuzzMain.cpp - A libFuzzer-like driver for g++ builds ----*- C++ -*-===//
//
// Linked with a fuzz target when the compiler has no libFuzzer (g++):
//
//   loom-fuzz-X [-runs=N] [-seed=S] [-max_len=L] [-timeout=S]
//               [-max_total_time=S] CORPUS_FILE_OR_DIR...
//
// runs every corpus input, then N mutants of them (Mutator.h, or the
// target's LLVMFuzzerCustomMutator when it has one), and ends with
// "loom-fuzz-X: N inputs (C corpus), no crash". As with libFuzzer, naming
// only files (a saved crash) runs just those, and with a directory the
// default is to fuzz until -max_total_time or forever.
//
// The sanitizers stop the process at the first error. Before that their
// death callback saves the input to crash-<target>-<n> in the working
// directory, so that `loom-fuzz-X crash-<target>-<n>` replays it. Uncaught
// exceptions and aborts go the same way (the target catches only
// loom::rt::Error; anything else escaping is a bug), and an input that
// runs past -timeout seconds is saved as timeout-<target>-<n>.
//
//===----------------------------------------------------------------------===//

#include "Mutator.h"

#include <sanitizer/common_interface_defs.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
    __attribute__((weak));
// A target that knows its inputs' structure (the compiler's) mutates them
// itself, as with libFuzzer, and may call LLVMFuzzerMutate below.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed)
    __attribute__((weak));

// Aborts (a failed check in a target, std::terminate) get a report with a
// stack trace and reach the death callback like any sanitizer error.
// Allocations far beyond any input's size are reported too: a reader must
// not trust a size field to allocate.
extern "C" const char *__asan_default_options() {
  return "handle_abort=1:allocator_may_return_null=0:"
         "max_allocation_size_mb=2048";
}
// With g++, UBSan is a library of its own that ignores the death callback
// set in ASan's; aborting hands its errors to ASan's SIGABRT handler.
extern "C" const char *__ubsan_default_options() {
  return "print_stacktrace=1:abort_on_error=1";
}

using loom::fuzz::Bytes;
using loom::fuzz::Mutator;
namespace fs = std::filesystem;

namespace {

struct Options {
  long long runs = -1; // -1: not given
  uint64_t seed = 1;
  size_t maxLen = 0;     // 0: from the corpus
  unsigned timeout = 20; // seconds per input; 0: none
  double maxTotalTime = 0;
};

std::string tool;   // loom-fuzz-safetensors
std::string target; // safetensors

// The input being run, for the crash handlers.
const Bytes *current = nullptr;
unsigned long long currentIndex = 0;

void writeStderr(const char *text) {
  ssize_t ignored = ::write(2, text, std::strlen(text));
  (void)ignored;
}

/// Saves the current input to <kind>-<target>-<index>. Called on the way
/// down, so it uses only plain system calls.
void saveCurrentInput(const char *kind) {
  if (!current)
    return;
  char name[256];
  std::snprintf(name, sizeof(name), "%s-%s-%llu", kind, target.c_str(),
                currentIndex);
  int fd = ::open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool saved = fd >= 0;
  size_t done = 0;
  while (saved && done < current->size()) {
    ssize_t wrote = ::write(fd, current->data() + done, current->size() - done);
    saved = wrote > 0;
    done += saved ? static_cast<size_t>(wrote) : 0;
  }
  if (fd >= 0)
    ::close(fd);
  char message[768];
  if (saved)
    std::snprintf(message, sizeof(message),
                  "%s: saved the input to %s (%zu bytes); rerun it with: %s "
                  "%s\n",
                  tool.c_str(), name, current->size(), tool.c_str(), name);
  else
    std::snprintf(message, sizeof(message),
                  "%s: could not save the input to %s\n", tool.c_str(), name);
  writeStderr(message);
  current = nullptr;
}

void onSanitizerDeath() { saveCurrentInput("crash"); }

void onTimeout(int) {
  writeStderr(tool.c_str());
  writeStderr(": an input ran past -timeout\n");
  saveCurrentInput("timeout");
  ::_exit(70);
}

[[noreturn]] void usage(const std::string &problem) {
  std::fprintf(stderr,
               "%s: %s\nusage: %s [-runs=N] [-seed=S] [-max_len=L] "
               "[-timeout=S] [-max_total_time=S] CORPUS_FILE_OR_DIR...\n",
               tool.c_str(), problem.c_str(), tool.c_str());
  std::exit(2);
}

unsigned long long number(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || text[0] == '-')
    usage("bad value for -" + flag + ": '" + text + "'");
  return value;
}

Options parseOptions(int argc, char **argv, std::vector<std::string> &paths) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.empty() || arg[0] != '-') {
      paths.push_back(arg);
      continue;
    }
    size_t equals = arg.find('=');
    if (equals == std::string::npos)
      usage("unknown option '" + arg + "'");
    std::string flag = arg.substr(1, equals - 1);
    std::string value = arg.substr(equals + 1);
    if (flag == "runs")
      options.runs = static_cast<long long>(number(flag, value));
    else if (flag == "seed")
      options.seed = number(flag, value);
    else if (flag == "max_len")
      options.maxLen = number(flag, value);
    else if (flag == "timeout")
      options.timeout = static_cast<unsigned>(number(flag, value));
    else if (flag == "max_total_time")
      options.maxTotalTime = static_cast<double>(number(flag, value));
    else
      usage("unknown option '" + arg + "'");
  }
  return options;
}

Bytes readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    usage("cannot read " + path.string());
  return Bytes(std::istreambuf_iterator<char>(in),
               std::istreambuf_iterator<char>());
}

/// Every regular file named or below a named directory, in path order.
std::vector<Bytes> loadCorpus(const std::vector<std::string> &paths,
                              bool &onlyFiles) {
  std::vector<fs::path> files;
  onlyFiles = true;
  for (const std::string &path : paths) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
      onlyFiles = false;
      for (const auto &entry : fs::recursive_directory_iterator(path, error))
        if (entry.is_regular_file())
          files.push_back(entry.path());
    } else if (fs::is_regular_file(path, error)) {
      files.push_back(path);
    } else {
      usage("no such file or directory: " + path);
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<Bytes> corpus;
  for (const fs::path &file : files)
    corpus.push_back(readFile(file));
  return corpus;
}

// The mutator of the run, for LLVMFuzzerMutate.
Mutator *activeMutator = nullptr;

/// The next mutant: the target's own mutation of a corpus input, or ours.
Bytes nextInput(Mutator &mutator, size_t maxLen) {
  if (!LLVMFuzzerCustomMutator)
    return mutator.next();
  Bytes input = mutator.pick();
  size_t size = input.size();
  input.resize(std::max(maxLen, size));
  size = LLVMFuzzerCustomMutator(input.data(), size, input.size(),
                                 static_cast<unsigned>(mutator.random()));
  input.resize(std::min(size, input.size()));
  return input;
}

void runOne(const Bytes &input, unsigned timeout) {
  current = &input;
  if (timeout)
    ::alarm(timeout);
  try {
    LLVMFuzzerTestOneInput(input.data(), input.size());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: uncaught exception: %s\n", tool.c_str(),
                 e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "%s: uncaught exception of unknown type\n",
                 tool.c_str());
    std::abort();
  }
  if (timeout)
    ::alarm(0);
  current = nullptr;
  ++currentIndex;
}

} // namespace

// libFuzzer's byte-level mutation, as a custom mutator sees it.
extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize) {
  Bytes bytes(data, data + size);
  activeMutator->mutate(bytes);
  size_t out = std::min(bytes.size(), maxSize);
  std::copy(bytes.begin(), bytes.begin() + out, data);
  return out;
}

int main(int argc, char **argv) {
  tool = fs::path(argv[0]).filename().string();
  target = tool.rfind("loom-fuzz-", 0) == 0 ? tool.substr(10) : tool;
  std::vector<std::string> paths;
  Options options = parseOptions(argc, argv, paths);
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  __sanitizer_set_death_callback(onSanitizerDeath);
  std::signal(SIGALRM, onTimeout);

  bool onlyFiles = true;
  std::vector<Bytes> corpus = loadCorpus(paths, onlyFiles);
  size_t largest = 0;
  for (const Bytes &input : corpus)
    largest = std::max(largest, input.size());
  if (!options.maxLen)
    options.maxLen = std::max<size_t>(4096, 2 * largest);
  // Like libFuzzer: files alone are replayed, directories are fuzzed (until
  // -max_total_time, or forever).
  long long runs = options.runs;
  if (runs < 0 && onlyFiles && !paths.empty() && !options.maxTotalTime)
    runs = 0;

  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  for (const Bytes &input : corpus)
    runOne(input, options.timeout);

  Mutator mutator(options.seed, corpus, options.maxLen);
  activeMutator = &mutator;
  unsigned long long mutants = 0, nextReport = 1 << 16;
  while (runs < 0 || mutants < static_cast<unsigned long long>(runs)) {
    if (options.maxTotalTime && (mutants & 255) == 0 &&
        elapsed() >= options.maxTotalTime)
      break;
    Bytes input = nextInput(mutator, options.maxLen);
    runOne(input, options.timeout);
    if (++mutants == nextReport) {
      std::fprintf(stderr, "%s: %llu inputs, %.0f/s\n", tool.c_str(),
                   currentIndex, currentIndex / elapsed());
      nextReport *= 2;
    }
  }
  double seconds = elapsed();
  std::fprintf(stderr, "%s: seed %llu, %.1f s, %.0f inputs/s\n", tool.c_str(),
               static_cast<unsigned long long>(options.seed), seconds,
               seconds > 0 ? currentIndex / seconds : 0.0);
  std::fprintf(stderr, "%s: %llu inputs (%zu corpus), no crash\n", tool.c_str(),
               currentIndex, corpus.size());
  return 0;
}
