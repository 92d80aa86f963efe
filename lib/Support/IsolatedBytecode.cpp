//===- IsolatedBytecode.cpp - Read MLIR bytecode in a child process -------===//
#include "loom/Support/IsolatedBytecode.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
using mlir::loom::BytecodeReadLimits;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LOOM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer)
#define LOOM_SANITIZED 1
#endif
#endif

double BytecodeReadLimits::defaultCpuSeconds(size_t inputBytes) {
  return 30.0 + 2.0 * static_cast<double>(inputBytes) / (1 << 20);
}

uint64_t BytecodeReadLimits::defaultMemoryBytes(size_t inputBytes) {
  return (uint64_t(1) << 30) + 16 * static_cast<uint64_t>(inputBytes);
}

namespace {

/// Exit statuses of the child besides a signal.
enum ChildExit : int {
  kRead = 0,      // the diagnostics and the text followed on the pipe
  kRejected = 1,  // the diagnostics followed; the reader or verifier failed
  kWriteFail = 2, // the pipe broke, or the parent was gone
};

/// The child's diagnostics travel to the parent, which emits them in its
/// own context (so they reach loomc's handlers and stream), as records of
/// five fields: severity, file, line, column, message. Each field is a
/// netstring ("<length>:<bytes>"), as messages may hold any byte.
constexpr size_t kMaxDiagnosticBytes = 1 << 20;

void appendField(llvm::raw_ostream &out, StringRef field) {
  out << field.size() << ':' << field;
}

void appendRecord(llvm::raw_ostream &out, char severity, Location loc,
                  StringRef message, StringRef inputName) {
  auto fileLoc = dyn_cast<FileLineColLoc>(loc);
  if (!fileLoc)
    fileLoc = loc->findInstanceOf<FileLineColLoc>();
  appendField(out, StringRef(&severity, 1));
  appendField(out, fileLoc ? fileLoc.getFilename().strref() : inputName);
  appendField(out, std::to_string(fileLoc ? fileLoc.getLine() : 0));
  appendField(out, std::to_string(fileLoc ? fileLoc.getColumn() : 0));
  appendField(out, message);
}

/// Reads one netstring field at the front of `in`; false if malformed.
bool takeField(StringRef &in, StringRef &field) {
  size_t colon = in.find(':');
  size_t size = 0;
  if (colon == StringRef::npos || in.take_front(colon).getAsInteger(10, size) ||
      in.size() - colon - 1 < size)
    return false;
  field = in.substr(colon + 1, size);
  in = in.drop_front(colon + 1 + size);
  return true;
}

char severityCode(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return 'e';
  case DiagnosticSeverity::Warning:
    return 'w';
  case DiagnosticSeverity::Remark:
    return 'r';
  case DiagnosticSeverity::Note:
    return 'n';
  }
  return 'e';
}

/// Emits the child's diagnostics in `context`; false if they are malformed.
/// Counts the errors in `errors`.
bool emitChildDiagnostics(StringRef records, MLIRContext *context,
                          unsigned &errors) {
  std::optional<InFlightDiagnostic> last;
  while (!records.empty()) {
    StringRef severity, file, lineText, columnText, message;
    unsigned line = 0, column = 0;
    if (!takeField(records, severity) || !takeField(records, file) ||
        !takeField(records, lineText) || !takeField(records, columnText) ||
        !takeField(records, message) || severity.size() != 1 ||
        lineText.getAsInteger(10, line) || columnText.getAsInteger(10, column))
      return false;
    Location loc = FileLineColLoc::get(context, file, line, column);
    if (severity[0] == 'n' && last) {
      last->attachNote(loc) << message;
      continue;
    }
    last.reset(); // reports the previous one, with its notes
    if (severity[0] == 'w') {
      last.emplace(emitWarning(loc));
    } else if (severity[0] == 'r') {
      last.emplace(emitRemark(loc));
    } else {
      last.emplace(emitError(loc));
      ++errors;
    }
    *last << message;
  }
  return true;
}

/// The child: reads `input`, writes its diagnostics and the module's text
/// to `fd`, never returns.
[[noreturn]] void readInChild(llvm::MemoryBufferRef input,
                              const DialectRegistry &registry,
                              bool allowUnregistered,
                              const BytecodeReadLimits &limits, pid_t parent,
                              int fd) {
  // The parent's handlers (LLVM's) print a stack dump and remove the
  // parent's output files on a crash: a crash here is reported by the
  // parent, and the files are the parent's.
  for (int sig :
       {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, SIGXCPU,
        SIGXFSZ, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2})
    std::signal(sig, SIG_DFL);
  // Never outlive the parent (a killed loomc leaves no reader spinning).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(kWriteFail);
  // The soft limit sends SIGXCPU; the hard one, a second later, SIGKILL.
  rlim_t cpu = static_cast<rlim_t>(std::ceil(limits.cpuSeconds));
  rlimit cpuLimit{cpu, cpu + 1};
  setrlimit(RLIMIT_CPU, &cpuLimit);
#ifndef LOOM_SANITIZED
  rlimit dataLimit{limits.memoryBytes, limits.memoryBytes};
  setrlimit(RLIMIT_DATA, &dataLimit);
#endif

  // Test hook: a child that blocks without spending CPU time.
  if (std::getenv("LOOM_TEST_BYTECODE_CHILD_BLOCKS"))
    pause();

  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(allowUnregistered);
  std::string diagnostics;
  llvm::raw_string_ostream records(diagnostics); // unbuffered
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    if (diagnostics.size() >= kMaxDiagnosticBytes)
      return success();
    appendRecord(records, severityCode(diagnostic.getSeverity()),
                 diagnostic.getLocation(), diagnostic.str(),
                 input.getBufferIdentifier());
    for (Diagnostic &note : diagnostic.getNotes())
      appendRecord(records, 'n', note.getLocation(), note.str(),
                   input.getBufferIdentifier());
    return success();
  });
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input, /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  appendField(os, diagnostics);
  // Generic form with every location: the text the parent parses is the
  // reader's IR exactly, whatever a dialect's custom printer would drop.
  if (module)
    module->print(os, OpPrintingFlags()
                          .enableDebugInfo(/*enable=*/true,
                                           /*prettyForm=*/false)
                          .printGenericOpForm());
  os.close();
  if (os.has_error())
    _exit(kWriteFail);
  _exit(module ? kRead : kRejected);
}

/// Reads `fd` to its end into `text`; false if `seconds` pass first.
bool readToEnd(int fd, double seconds, std::string &text) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  char chunk[1 << 16];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - Clock::now())
                    .count();
    if (left <= 0)
      return false;
    pollfd ready{fd, POLLIN, 0};
    int polled = poll(&ready, 1,
                      static_cast<int>(std::min<long long>(
                          left, std::numeric_limits<int>::max())));
    if (polled < 0 && errno == EINTR)
      continue;
    if (polled <= 0)
      return polled != 0; // an error (not a timeout): what was read is all
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n > 0)
      text.append(chunk, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR)
      return true;
  }
}

std::string describeSignal(int sig) {
  const char *name = strsignal(sig);
  return llvm::formatv("signal {0} ({1})", sig, name ? name : "unknown");
}

} // namespace

FailureOr<std::string>
mlir::loom::readBytecodeIsolated(llvm::MemoryBufferRef input,
                                 MLIRContext *context,
                                 BytecodeReadLimits limits) {
  if (limits.cpuSeconds <= 0)
    limits.cpuSeconds =
        BytecodeReadLimits::defaultCpuSeconds(input.getBufferSize());
  if (limits.memoryBytes == 0)
    limits.memoryBytes =
        BytecodeReadLimits::defaultMemoryBytes(input.getBufferSize());
  Location loc = FileLineColLoc::get(context, input.getBufferIdentifier(),
                                     /*line=*/0, /*column=*/0);
  int fds[2];
  if (pipe(fds) != 0)
    return emitError(loc) << "cannot read bytecode: pipe: "
                          << std::strerror(errno);
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return emitError(loc) << "cannot read bytecode: fork: "
                          << std::strerror(err);
  }
  if (pid == 0) {
    close(fds[0]);
    readInChild(input, context->getDialectRegistry(),
                context->allowsUnregisteredDialects(), limits, parent, fds[1]);
  }
  close(fds[1]);
  // A child blocked rather than busy (on a lock a thread of this process
  // held when it forked) spends no CPU time: the wall clock stops it.
  double wallSeconds = 2 * limits.cpuSeconds + 5;
  std::string text;
  bool finished = readToEnd(fds[0], wallSeconds, text);
  close(fds[0]);
  if (!finished)
    kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return emitError(loc)
             << "cannot read bytecode: waitpid: " << std::strerror(errno);
  }
  if (!finished)
    return emitError(loc) << "MLIR's bytecode reader did not finish within "
                          << llvm::formatv("{0:f1}", wallSeconds)
                          << " s on this input (it was stopped); the file is "
                          << "not valid bytecode, or needs more time";
  if (WIFEXITED(status) &&
      (WEXITSTATUS(status) == kRead || WEXITSTATUS(status) == kRejected)) {
    StringRef rest = text, diagnostics;
    unsigned errors = 0;
    if (!takeField(rest, diagnostics) ||
        !emitChildDiagnostics(diagnostics, context, errors))
      return emitError(loc) << "the process that read this bytecode passed "
                               "back malformed diagnostics";
    if (WEXITSTATUS(status) == kRejected) {
      // Mutated bytecode made the reader fail without an error.
      if (errors == 0)
        emitError(loc) << "MLIR's bytecode reader rejected this input "
                          "without an error; it is not valid bytecode";
      return failure();
    }
    text.erase(0, text.size() - rest.size());
    return text;
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (sig == SIGXCPU || sig == SIGKILL)
      return emitError(loc)
             << "MLIR's bytecode reader did not finish within "
             << llvm::formatv("{0:f1}", limits.cpuSeconds)
             << " s of CPU time on this input (it was stopped, "
             << describeSignal(sig) << "); the file is not valid bytecode, "
             << "or needs more time";
    return emitError(loc)
           << "MLIR's bytecode reader crashed or ran out of memory on this "
           << "input (" << describeSignal(sig) << "; it may use "
           << llvm::formatv("{0:f1}", limits.memoryBytes / double(1 << 30))
           << " GiB); the file is not valid bytecode";
  }
  return emitError(loc) << "MLIR's bytecode reader stopped with exit status "
                        << (WIFEXITED(status) ? WEXITSTATUS(status) : -1)
                        << " before it passed the module back";
}

LogicalResult
mlir::loom::replaceBytecodeWithText(std::unique_ptr<llvm::MemoryBuffer> &input,
                                    MLIRContext *context,
                                    BytecodeReadLimits limits) {
  if (!isBytecode(input->getMemBufferRef()))
    return success();
  FailureOr<std::string> text =
      readBytecodeIsolated(input->getMemBufferRef(), context, limits);
  if (failed(text))
    return failure();
  input =
      llvm::MemoryBuffer::getMemBufferCopy(*text, input->getBufferIdentifier());
  return success();
}
