//===- LauncherTest.cpp - Tests of the --ranks launcher ---------*- C++ -*-===//
//
// The mpiexec command line, and how Open MPI's notices about a failed job
// (captured from mpirun 4.1) become one line naming the rank.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Launcher.h"
#include "TestUtil.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/HangReport.h"

#include <cstdio>
#include <sstream>

using namespace loom::rt;

namespace {

const char *kEdge = "----------------------------------------------------------"
                    "----------------";

/// Feeds `text` line by line; returns what the filter lets through.
std::string filter(MpirunOutputFilter &output, const std::string &text) {
  std::istringstream lines(text);
  std::string passed;
  for (std::string line; std::getline(lines, line);)
    passed += output.line(line == "EDGE" ? kEdge : line);
  return passed + output.finish();
}

const char *kKilled = R"(step 1/100 | loss 1.4830
EDGE
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
EDGE
EDGE
mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).
EDGE
)";

const char *kErrorExit = R"(loom-run: error: checkpoint ck is corrupted
EDGE
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
EDGE
EDGE
mpirun detected that one or more processes exited with non-zero status, thus causing
the job to be terminated. The first process to do so was:

  Process name: [[2862,1],0]
  Exit code:    1
EDGE
)";

const char *kAbort = R"(loom-run: error: rank 0: all_reduce has waited 3 s
EDGE
MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD
with errorcode 1.

NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.
EDGE
[vm:31041] 1 more process has sent help message help-mpi-api.txt / mpi-abort
[vm:31041] Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error messages
)";

} // namespace

TEST(Launcher, RunsOpenMpiOnTheRankCommand) {
  LaunchOptions options;
  options.ranks = 3;
  options.args = {"/bin/loom-run", "out", "--steps", "5"};
  std::vector<std::string> command =
      mpiexecCommand("/usr/bin/mpirun.openmpi", options);
  ASSERT_GE(command.size(), 8u);
  EXPECT_EQ(command[0], "/usr/bin/mpirun.openmpi");
  EXPECT_EQ(command[1], "-np");
  EXPECT_EQ(command[2], "3");
  std::string joined;
  for (const std::string &word : command)
    joined += word + " ";
  EXPECT_NE(joined.find("--bind-to none --oversubscribe"), std::string::npos);
  EXPECT_NE(joined.find("/bin/loom-run out --steps 5 "), std::string::npos);
  std::vector<std::string> hydra =
      mpiexecCommand("/usr/bin/mpiexec.mpich", options);
  EXPECT_EQ(hydra[1], "-n");
}

TEST(Launcher, AKilledRankBecomesOneLine) {
  MpirunOutputFilter output;
  EXPECT_EQ(filter(output, kKilled), "step 1/100 | loss 1.4830\n");
  EXPECT_EQ(output.failure(),
            "rank 1 (on node vm) was killed by signal 9 (Killed)");
  EXPECT_EQ(launchFailureMessage(output, 137),
            "rank 1 (on node vm) was killed by signal 9 (Killed); the other "
            "ranks were stopped (exit status 137)");
  // What --max-restarts retries.
  EXPECT_TRUE(output.crashed());
}

TEST(Launcher, ARankThatReportedItsErrorNeedsNoMore) {
  setToolName("loom-run"); // the launcher and its ranks are one program
  MpirunOutputFilter output;
  EXPECT_EQ(filter(output, kErrorExit),
            "loom-run: error: checkpoint ck is corrupted\n");
  EXPECT_TRUE(output.rankPrintedError());
  EXPECT_EQ(output.failure(), "rank 0 exited with status 1");
  EXPECT_EQ(launchFailureMessage(output, 1), "");
  // The ranks agreed on this error: a restart would meet it again.
  EXPECT_FALSE(output.crashed());

  MpirunOutputFilter aborted;
  EXPECT_EQ(filter(aborted, kAbort),
            "loom-run: error: rank 0: all_reduce has waited 3 s\n");
  EXPECT_EQ(aborted.failure(), "rank 0 aborted the job (MPI_Abort, status 1)");
  EXPECT_EQ(launchFailureMessage(aborted, 1), "");
  // One rank gave up on its peers (a watchdog): worth a restart.
  EXPECT_TRUE(aborted.crashed());
  // One that stopped the job on an error a restart would meet again (its
  // own NaN loss) says so with its status.
  std::string final = kAbort;
  final.replace(final.find("errorcode 1"), 11,
                "errorcode " + std::to_string(kAbortStatusFinal));
  MpirunOutputFilter stopped;
  filter(stopped, final);
  EXPECT_EQ(stopped.failure(), "rank 0 aborted the job (MPI_Abort, status " +
                                   std::to_string(kAbortStatusFinal) + ")");
  EXPECT_FALSE(stopped.crashed());
}

TEST(Launcher, UnknownNoticesPassThrough) {
  MpirunOutputFilter output;
  std::string text = "EDGE\nThere are not enough slots available\nEDGE\n";
  std::string passed = filter(output, text);
  EXPECT_NE(passed.find("not enough slots"), std::string::npos);
  EXPECT_EQ(passed.find("EDGE"), std::string::npos);
  EXPECT_EQ(launchFailureMessage(output, 1),
            "the job failed (the MPI launcher exited with status 1)");
  EXPECT_EQ(launchFailureMessage(output, 0), "");
  // An unterminated box is printed at the end rather than lost.
  MpirunOutputFilter open;
  EXPECT_NE(filter(open, "EDGE\nhalf a notice\n").find("half a notice"),
            std::string::npos);
}

TEST(Launcher, MpirunsNoteOfASignalPassedOnIsDropped) {
  // The launcher passes SIGUSR2 (stop), SIGTSTP and SIGCONT to mpirun and
  // says itself what they do; a rank's line that merely mentions it stays.
  MpirunOutputFilter output;
  std::string passed =
      filter(output, "mpiexec: Forwarding signal 12 to job\n"
                     "mpirun: Forwarding signal 20 to job\n"
                     "rank 1: mpiexec: Forwarding signal 12 to job\n");
  EXPECT_EQ(passed, "rank 1: mpiexec: Forwarding signal 12 to job\n");
}

namespace {

/// A FlightRecord or PastCollective of collective `op` #`seq`.
template <typename Entry>
Entry collective(const char *op, int64_t seq, int64_t count,
                 const char *dtype) {
  Entry e;
  e.op = op;
  e.seq = seq;
  e.count = count;
  e.dtype = dtype;
  return e;
}

FlightRecord waiting(int rank, const char *op, int64_t seq, int64_t count,
                     const char *dtype = "f32") {
  auto r = collective<FlightRecord>(op, seq, count, dtype);
  r.rank = rank;
  r.waitedS = 60;
  return r;
}

PastCollective past(const char *op, int64_t seq, int64_t count,
                    const char *dtype = "f32") {
  auto p = collective<PastCollective>(op, seq, count, dtype);
  p.startedAgoS = 60.5;
  p.tookS = 0.25;
  return p;
}

} // namespace

TEST(HangReport, NamesTheRanksThatDidNotReachTheCollective) {
  EXPECT_EQ(describeHang({}, 4), "");
  EXPECT_EQ(describeHang({waiting(0, "all_reduce", 57, 1, "f64")}, 2),
            "rank 0 waited in all_reduce #57 (1 f64); rank 1 did not report: "
            "stopped, or stuck outside collectives (in compute or I/O)");
  EXPECT_EQ(describeHang(
                {waiting(3, "barrier", 9, 0), waiting(0, "barrier", 9, 0)}, 4),
            "ranks 0, 3 waited in barrier #9; ranks 1, 2 did not report: "
            "stopped, or stuck outside collectives (in compute or I/O)");
  EXPECT_EQ(
      describeHang(
          {waiting(0, "all_reduce", 5, 8), waiting(1, "all_reduce", 5, 8)}, 2),
      "every rank waited in all_reduce #5 (8 f32): the collective "
      "itself is stuck (the network, or the MPI library)");
}

TEST(HangReport, NamesCollectivesThatDiffer) {
  // The same number, another collective: the schedules diverged there.
  EXPECT_EQ(describeHang({waiting(1, "broadcast", 12, 3, "i64"),
                          waiting(0, "all_reduce", 12, 1, "f64"),
                          waiting(2, "all_reduce", 12, 1, "f64")},
                         4),
            "the ranks issued different collectives as their #12: ranks 0, "
            "2 in all_reduce #12 (1 f64), rank 1 in broadcast #12 (3 i64); "
            "rank 3 did not report: stopped, or stuck outside collectives "
            "(in compute or I/O)");
  // A rank stopped inside a collective that its peer already finished (a
  // ring all-reduce ends on one rank before the other) is behind.
  EXPECT_EQ(describeHang({waiting(0, "all_reduce", 3318, 1, "f64"),
                          waiting(1, "all_reduce", 3317, 36, "f64")},
                         2),
            "rank 1 is behind the others: rank 1 in all_reduce #3317 (36 "
            "f64), rank 0 in all_reduce #3318 (1 f64)");
  EXPECT_EQ(describeHang({waiting(2, "all_reduce", 13, 4),
                          waiting(0, "all_reduce", 12, 4),
                          waiting(1, "broadcast", 12, 4)},
                         3),
            "ranks 0, 1 are behind the others: rank 0 in all_reduce #12 (4 "
            "f32), rank 1 in broadcast #12 (4 f32), rank 2 in all_reduce #13 "
            "(4 f32)");
}

TEST(HangReport, NamesRanksThatWereThemselvesStopped) {
  // Stopped inside the collective, it wrote its record once mpirun's
  // SIGCONT let it run again: not a rank that waited for the others.
  FlightRecord stopped = waiting(1, "all_reduce", 7607, 36, "f64");
  stopped.stoppedS = 4.2;
  EXPECT_EQ(
      describeHang({waiting(0, "all_reduce", 7607, 36, "f64"), stopped}, 2),
      "rank 1 was itself stopped for 4 s in all_reduce #7607 (36 f64) "
      "(SIGSTOP, a debugger, or a frozen machine); rank 0 waited in "
      "all_reduce #7607 (36 f64)");
  EXPECT_EQ(describeHang({stopped}, 3),
            "rank 1 was itself stopped for 4 s in all_reduce #7607 (36 f64) "
            "(SIGSTOP, a debugger, or a frozen machine); ranks 0, 2 did not "
            "report: stopped, or stuck outside collectives (in compute or "
            "I/O)");
}

TEST(HangReport, NamesTheFirstCollectiveWhereRanksParted) {
  // Both wait in all_reduce #20, but their recent collectives show that
  // #12 differed (it completed anyway): that is the cause.
  FlightRecord zero = waiting(0, "all_reduce", 20, 1, "f64");
  FlightRecord one = waiting(1, "all_reduce", 20, 1, "f64");
  for (int64_t seq = 10; seq < 20; ++seq) {
    zero.recent.push_back(past("all_reduce", seq, 36, "f64"));
    one.recent.push_back(past(seq == 12 ? "all_gather" : "all_reduce", seq,
                              seq == 12 ? 18 : 36, "f64"));
  }
  EXPECT_EQ(describeHang({zero, one}, 2),
            "the ranks' collectives first differ at #12, before any they "
            "wait in: rank 0 all_reduce #12 (36 f64), rank 1 all_gather #12 "
            "(18 f64); ranks 0, 1 waited in all_reduce #20 (1 f64)");
  // Where they agree as far back as the records reach, the waits say it.
  one.recent = zero.recent;
  EXPECT_EQ(describeHang({zero, one}, 2),
            "every rank waited in all_reduce #20 (1 f64): the collective "
            "itself is stuck (the network, or the MPI library)");
  // A rank behind agrees with what the other finished at its number.
  FlightRecord behind = waiting(1, "all_reduce", 19, 36, "f64");
  behind.recent = {past("all_reduce", 18, 36, "f64")};
  EXPECT_EQ(describeHang({zero, behind}, 2),
            "rank 1 is behind the others: rank 1 in all_reduce #19 (36 f64), "
            "rank 0 in all_reduce #20 (1 f64)");
}

TEST(HangReport, DescribesEachRanksLastCollectives) {
  FlightRecord zero = waiting(0, "all_reduce", 20, 1, "f64");
  for (int64_t seq = 14; seq < 20; ++seq)
    zero.recent.push_back(past("all_reduce", seq, 36, "f64"));
  zero.recent.back().tookS = 2.5e-5;
  zero.recent[4].tookS = 0.0041;
  FlightRecord one = waiting(1, "barrier", 20, 0);
  one.stoppedS = 12;
  EXPECT_EQ(describeRecords({one, zero}, 3),
            "rank 0: waited 60 s in all_reduce #20 (1 f64); before it "
            "all_reduce #19 (36 f64) in 25 us, all_reduce #18 (36 f64) in 4.1 "
            "ms, all_reduce #17 (36 f64) in 250.0 ms, ... (6 in the record)\n"
            "rank 1: waited 60 s in barrier #20 (of which 12 s stopped)\n");
}

TEST(HangReport, RecordsRoundTripThroughTheirDirectory) {
  test::TempDir dir;
  FlightRecord one = waiting(1, "all_gather", 3, 7);
  one.recent = {past("barrier", 1, 0), past("broadcast", 2, 5, "i64")};
  one.ranks = 3;
  ASSERT_TRUE(writeFlightRecord(dir.path(), one));
  ASSERT_TRUE(writeFlightRecord(dir.path(), waiting(0, "all_gather", 3, 7)));
  // What is not a whole record is skipped.
  std::FILE *junk = std::fopen(dir.file("rank2.json").c_str(), "w");
  std::fputs("{\"rank\": 2, \"op\"", junk);
  std::fclose(junk);
  std::vector<FlightRecord> records = readFlightRecords(dir.path());
  ASSERT_EQ(records.size(), 2u);
  const FlightRecord &read = records[records[0].rank == 1 ? 0 : 1];
  ASSERT_EQ(read.recent.size(), 2u);
  EXPECT_EQ(describeCollective(read.recent[1]), "broadcast #2 (5 i64)");
  EXPECT_EQ(read.recent[1].startedAgoS, 60.5);
  EXPECT_EQ(read.recent[1].tookS, 0.25);
  EXPECT_EQ(read.recent[0].op, "barrier");
  EXPECT_EQ(read.ranks, 3);
  // A directory that does not exist yet is created.
  ASSERT_TRUE(writeFlightRecord(dir.file("new/records"), one));
  EXPECT_EQ(readFlightRecords(dir.file("new/records")).size(), 1u);
  EXPECT_EQ(describeHang(records, 3),
            "ranks 0, 1 waited in all_gather #3 (7 f32); rank 2 did not "
            "report: stopped, or stuck outside collectives (in compute or "
            "I/O)");
}
