//===- CalibrateTest.cpp - Tests of loom-run --calibrate's file -*- C++ -*-===//
//
// The calibration file is read by loomc (lib/Driver/MachineSpec.cpp), so
// its keys, their presence by rank count and their values are a contract;
// the link fit must never turn noise into a negative or infinite bandwidth.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Calibrate.h"
#include "TestUtil.h"
#include "loom/runtime/Communicator.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

using namespace loom::rt;
using namespace loom::rt::test;
using nlohmann::json;

namespace {

CalibrationResult twoRanks() {
  CalibrationResult result;
  result.ranks = 2;
  result.backend = "mpi";
  result.threads = 4;
  result.gemmGflops = 38.125;
  result.linkGbps = 0.9321;
  result.linkLatencyUs = 61.4;
  result.commCpuFraction = 0.40625;
  result.allReduceSamples = {{65536, 0.00061}, {131072, 0.0012}};
  result.host = "node-1";
  return result;
}

json readJson(const std::string &path) {
  std::vector<char> bytes = readBytes(path);
  return json::parse(bytes.begin(), bytes.end());
}

} // namespace

TEST(Calibrate, WritesEveryFieldAndReadsBackExactly) {
  TempDir dir;
  std::string path = dir.file("cal.json");
  writeCalibration(path, twoRanks());
  json file = readJson(path);
  std::vector<std::string> keys;
  for (const auto &item : file.items())
    keys.push_back(item.key());
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "allreduce_samples", "backend", "comm_cpu_fraction",
                      "format", "gemm_gflops", "host", "link_gbps",
                      "link_latency_us", "ranks", "threads", "version"}));
  EXPECT_EQ(file["format"], "loom-calibration");
  EXPECT_EQ(file["version"], kCalibrationVersion);
  EXPECT_EQ(file["ranks"], 2);
  EXPECT_EQ(file["backend"], "mpi");
  EXPECT_EQ(file["threads"], 4);
  // Doubles survive the text round trip bit for bit.
  EXPECT_EQ(file["gemm_gflops"].get<double>(), 38.125);
  EXPECT_EQ(file["link_gbps"].get<double>(), 0.9321);
  EXPECT_EQ(file["link_latency_us"].get<double>(), 61.4);
  EXPECT_EQ(file["comm_cpu_fraction"].get<double>(), 0.40625);
  ASSERT_EQ(file["allreduce_samples"].size(), 2u);
  EXPECT_EQ(file["allreduce_samples"][1]["bytes"], 131072);
  EXPECT_EQ(file["allreduce_samples"][1]["seconds"].get<double>(), 0.0012);
  EXPECT_EQ(file["host"], "node-1");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(Calibrate, OneRankHasNoLinkNumbers) {
  TempDir dir;
  CalibrationResult result;
  result.gemmGflops = 12.5;
  writeCalibration(dir.file("one.json"), result);
  json file = readJson(dir.file("one.json"));
  EXPECT_EQ(file["ranks"], 1);
  EXPECT_EQ(file["backend"], "local");
  EXPECT_FALSE(file.contains("link_gbps"));
  EXPECT_FALSE(file.contains("link_latency_us"));
  EXPECT_FALSE(file.contains("comm_cpu_fraction"));
  EXPECT_TRUE(file["allreduce_samples"].is_array());
  EXPECT_TRUE(file["allreduce_samples"].empty());
}

TEST(Calibrate, ReplacesAnExistingFile) {
  TempDir dir;
  std::string path = dir.file("cal.json");
  writeText(path, "old contents, not JSON");
  writeCalibration(path, twoRanks());
  EXPECT_EQ(readJson(path)["ranks"], 2);
}

TEST(Calibrate, RefusesAPathItCannotWrite) {
  TempDir dir;
  EXPECT_TRUE(throwsError(
      [&] { writeCalibration(dir.file("missing/cal.json"), twoRanks()); },
      {"cannot write calibration file", "missing/cal.json", "does not exist"}));
  EXPECT_TRUE(throwsError([&] { checkCalibrationPath(dir.path()); },
                          {"it is a directory"}));
  writeText(dir.file("plain"), "");
  EXPECT_TRUE(throwsError([&] { checkCalibrationPath(dir.file("plain/x")); },
                          {"is not a directory"}));
  EXPECT_FALSE(std::filesystem::exists(dir.file("missing")));
}

TEST(Calibrate, FitsTheLinkModel) {
  EXPECT_DOUBLE_EQ(ringAllReduceBytes(1000, 2), 1000);
  EXPECT_DOUBLE_EQ(ringAllReduceBytes(1000, 4), 1500);
  EXPECT_DOUBLE_EQ(ringAllReduceBytes(1000, 1), 0);
  // 1 MB over 2 ranks in 10 ms + 1 ms latency: 100 MB/s.
  EXPECT_DOUBLE_EQ(fitLinkBandwidth({1000000, 0.011}, 0.001, 2), 1e8);
  // Noise: no slower than an empty all-reduce; the whole time bounds it.
  EXPECT_DOUBLE_EQ(fitLinkBandwidth({1000000, 0.001}, 0.002, 2), 1e9);
  EXPECT_EQ(fitLinkBandwidth({1000000, 0.0}, 0.0, 2), 0);
}

TEST(Calibrate, DescribesTheResult) {
  EXPECT_EQ(describeCalibration(twoRanks()),
            "2 ranks: GEMM 38.1 GFLOP/s, all-reduce 0.932 Gbit/s, latency "
            "61 us");
  CalibrationResult one;
  one.gemmGflops = 7.26;
  EXPECT_EQ(describeCalibration(one), "1 rank: GEMM 7.3 GFLOP/s");
}

TEST(Calibrate, MeasuresOneRank) {
  LocalCommunicator comm;
  std::ostringstream progress;
  CalibrationResult result = calibrate(comm, 1, progress);
  EXPECT_EQ(result.ranks, 1);
  EXPECT_EQ(result.backend, "local");
  EXPECT_EQ(result.threads, 1);
  EXPECT_GT(result.gemmGflops, 0);
  EXPECT_TRUE(result.allReduceSamples.empty());
  EXPECT_NE(progress.str().find("calibrate: GEMM"), std::string::npos);
}
