//===- MpirunOutput.cpp - Reading Open MPI's mpirun notices -----*- C++ -*-===//
//
// Open MPI reports a failed job in boxes between lines of dashes, e.g.
//   mpirun noticed that process rank 1 with PID 0 on node n1 exited on
//   signal 9 (Killed).
// The boxes that only restate which rank failed are held back and turned
// into one line; any other box (a real configuration problem) passes through
// untouched, as does everything the ranks print. Other launchers' output is
// passed through as is.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/CurrentCommunicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Launcher.h"

#include <regex>

namespace loom::rt {

namespace {

bool isBoxEdge(const std::string &text) {
  if (text.size() < 20)
    return false;
  for (char c : text)
    if (c != '-')
      return false;
  return true;
}

std::string joined(const std::vector<std::string> &lines) {
  std::string text;
  for (const std::string &line : lines)
    text += line + " ";
  return text;
}

std::string withNewlines(const std::vector<std::string> &lines) {
  std::string text;
  for (const std::string &line : lines)
    text += line + "\n";
  return text;
}

} // namespace

std::string MpirunOutputFilter::line(const std::string &text) {
  if (isBoxEdge(text)) {
    if (!inBox) {
      inBox = true;
      box = {text};
      return "";
    }
    box.push_back(text);
    inBox = false;
    return closeBox();
  }
  if (inBox) {
    box.push_back(text);
    return "";
  }
  // Open MPI failing to format, or counting repeats of, the notices held
  // back above; the ranks have said why they stopped.
  if ((text.find("ORTE_ERROR_LOG") != std::string::npos &&
       text.find("show_help") != std::string::npos) ||
      text.find("sent help message") != std::string::npos ||
      text.find("orte_base_help_aggregate") != std::string::npos)
    return "";
  // mpirun saying it passed on a signal the launcher sent it (SIGUSR1,
  // SIGUSR2 to stop, SIGTSTP, SIGCONT): the launcher says what it does.
  static const std::regex forwarding(
      R"(^(mpirun|mpiexec|orterun): Forwarding signal \d+ to job$)");
  if (std::regex_match(text, forwarding))
    return "";
  if (text.find(std::string(toolName()) + ": error:") != std::string::npos)
    sawError = true;
  return text + "\n";
}

std::string MpirunOutputFilter::closeBox() {
  std::string text = joined(box);
  std::smatch match;
  static const std::regex signal(
      R"(process rank (\d+) with PID \d+ on node (\S+) exited on signal (\d+)(?: \(([^)]*)\))?)");
  static const std::regex nonZero(
      R"(processes exited with non-zero status.*Process name: \[\[\d+,\d+\],(\d+)\].*Exit code: +(\d+))");
  static const std::regex aborted(
      R"(MPI_ABORT was invoked on rank (\d+) in communicator \S+ +with errorcode (-?\d+))");
  static const std::regex improper(
      R"(process rank (\d+) with PID \d+ on node (\S+) exiting improperly)");
  bool known = true;
  if (std::regex_search(text, match, signal)) {
    why = "rank " + match[1].str() + " (on node " + match[2].str() +
          ") was killed by signal " + match[3].str();
    if (match[4].matched)
      why += " (" + match[4].str() + ")";
    errorExit = false;
    crash = true;
  } else if (std::regex_search(text, match, nonZero)) {
    if (why.empty()) {
      why = "rank " + match[1].str() + " exited with status " + match[2].str();
      errorExit = true;
    }
  } else if (std::regex_search(text, match, aborted)) {
    if (why.empty()) {
      why = "rank " + match[1].str() + " aborted the job (MPI_Abort, status " +
            match[2].str() + ")";
      errorExit = true;
    }
    // A rank that stopped the job on an error of its own that a restart
    // would meet again said so with its status.
    crash = crash || match[2].str() != std::to_string(kAbortStatusFinal);
  } else if (std::regex_search(text, match, improper)) {
    if (why.empty()) {
      why = "rank " + match[1].str() + " (on node " + match[2].str() +
            ") exited without finishing MPI";
      errorExit = false;
    }
    crash = true;
  } else if (text.find("Primary job  terminated normally, but") ==
             std::string::npos) {
    known = false;
  }
  std::string held = known ? "" : withNewlines(box);
  box.clear();
  return held;
}

std::string MpirunOutputFilter::finish() {
  std::string rest = withNewlines(box);
  box.clear();
  inBox = false;
  return rest;
}

std::string launchFailureMessage(const MpirunOutputFilter &filter, int status) {
  if (status == 0)
    return "";
  // A rank that failed with a message has said everything.
  if (filter.rankPrintedError() &&
      (filter.failure().empty() || filter.failureIsErrorExit()))
    return "";
  if (!filter.failure().empty())
    return filter.failure() + "; the other ranks were stopped (exit status " +
           std::to_string(status) + ")";
  if (status > 128)
    return "the job was stopped by signal " + std::to_string(status - 128) +
           " (exit status " + std::to_string(status) + ")";
  return "the job failed (the MPI launcher exited with status " +
         std::to_string(status) + ")";
}

} // namespace loom::rt
