//===- ZeroManifestTest.cpp - Tests of ZeRO manifests -------*- C++ -*-===//
//
// A ZeRO artifact's manifest (the zero object, sharded state tensors, and
// at stage 3 sharded params with their full_shape) is checked field by
// field, and a job of other ranks than it splits its tensors over is
// refused before it starts.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "loom/runtime/Manifest.h"
#include "loom/runtime/World.h"

using namespace loom::rt;
using namespace loom::rt::test;
using nlohmann::json;

namespace {

::testing::AssertionResult zeroRejects(const json &manifest,
                                       const std::vector<std::string> &parts) {
  return throwsError([&] { parseManifest(manifest.dump(), "m.json"); }, parts);
}

} // namespace

TEST(ZeroManifest, ParsesTheZeroObjectAndTheShardedState) {
  Manifest m = parseManifest(zeroManifest(3, 2).dump(), "m.json");
  EXPECT_TRUE(m.zero.enabled());
  EXPECT_EQ(m.zero.stage, 2);
  EXPECT_EQ(m.zero.ranks, 3);
  ASSERT_EQ(m.state.size(), 2u);
  // W is [4, 8] and b [4]: ceil(32 / 3) and ceil(4 / 3) elements a rank.
  EXPECT_TRUE(m.state[0].sharded);
  EXPECT_EQ(m.state[0].shape, (Shape{11}));
  EXPECT_EQ(m.state[1].shape, (Shape{2}));

  Manifest plain = parseManifest(softmaxManifest().dump(), "m.json");
  EXPECT_FALSE(plain.zero.enabled());
  EXPECT_FALSE(plain.state[0].sharded);
  // "sharded": false is a whole tensor.
  json m2 = softmaxManifest();
  m2["state"][0]["sharded"] = false;
  EXPECT_FALSE(parseManifest(m2.dump(), "m.json").state[0].sharded);
}

TEST(ZeroManifest, ShardElementsRoundUp) {
  ZeroSpec zero{1, 3};
  EXPECT_EQ(zero.shardElements(32), 11);
  EXPECT_EQ(zero.shardElements(33), 11);
  EXPECT_EQ(zero.shardElements(4), 2);
  EXPECT_EQ(zero.shardElements(1), 1);
}

TEST(ZeroManifest, TheStageIsOneToThree) {
  for (int stage : {0, 4, -1}) {
    json m = zeroManifest(2);
    m["zero"]["stage"] = stage;
    EXPECT_TRUE(zeroRejects(m, {"m.json: zero.stage: must be 1", "2 (",
                                "or 3 (", "got " + std::to_string(stage)}));
  }
  for (int stage : {1, 2, 3})
    EXPECT_EQ(parseManifest(zeroManifest(2, stage).dump(), "m.json").zero.stage,
              stage);
  json m = zeroManifest(2);
  m["zero"]["stage"] = "1";
  EXPECT_TRUE(zeroRejects(m, {"m.json: zero.stage: expected an integer"}));
  m = zeroManifest(2);
  m["zero"].erase("stage");
  EXPECT_TRUE(zeroRejects(m, {"m.json: zero.stage: missing required field"}));
  m = zeroManifest(2);
  m["zero"] = 1;
  EXPECT_TRUE(zeroRejects(m, {"m.json: zero: expected an object"}));
}

TEST(ZeroManifest, TheRanksAreTwoOrMoreAndTheMeshs) {
  json m = zeroManifest(2);
  m["zero"]["ranks"] = 1;
  m["mesh"]["shape"] = {1};
  EXPECT_TRUE(
      zeroRejects(m, {"m.json: zero.ranks: must be at least 2", "got 1"}));
  m = zeroManifest(2);
  m["zero"].erase("ranks");
  EXPECT_TRUE(zeroRejects(m, {"m.json: zero.ranks: missing required field"}));
  m = zeroManifest(2);
  m["zero"]["ranks"] = 4;
  EXPECT_TRUE(
      zeroRejects(m, {"m.json: zero.ranks: 4 ranks, but the artifact runs on 2 "
                      "(mesh dp=2)"}));
  m = zeroManifest(2);
  m.erase("mesh");
  EXPECT_TRUE(zeroRejects(m, {"zero.ranks:", "1 rank (no mesh)"}));
}

TEST(ZeroManifest, ShardedStateNeedsTheZeroObject) {
  json m = zeroManifest(2);
  m.erase("zero");
  EXPECT_TRUE(zeroRejects(
      m, {"m.json: state[0].sharded:", "'W.momentum_buffer' is sharded",
          "no \"zero\" object"}));
}

TEST(ZeroManifest, ShardedStateNeedsAParam) {
  json m = zeroManifest(2);
  m["state"][1].erase("param");
  EXPECT_TRUE(zeroRejects(m, {"m.json: state[1].sharded:",
                              "'b.momentum_buffer' is sharded, but names no "
                              "param"}));
}

TEST(ZeroManifest, ShardedStateHasTheSlicesShape) {
  // The param's shape (state as data parallelism keeps it) is not a slice.
  json m = zeroManifest(2);
  m["state"][0]["shape"] = {4, 8};
  EXPECT_TRUE(zeroRejects(
      m, {"m.json: state[0].shape:", "sharded over 2 ranks (zero.ranks)",
          "ceil(32 / 2) elements of the state of param 'W'",
          "expected shape [16], got [4, 8]"}));
  // Rounded down instead of up.
  m = zeroManifest(3);
  m["state"][0]["shape"] = {10};
  EXPECT_TRUE(
      zeroRejects(m, {"state[0].shape:", "expected shape [11], got [10]"}));
  m = zeroManifest(3);
  m["state"][1]["shape"] = json::array();
  EXPECT_TRUE(
      zeroRejects(m, {"state[1].shape:", "expected shape [2], got []"}));
}

TEST(ZeroManifest, ZeroSizeParamsAreNeverSharded) {
  json m = zeroManifest(2);
  m["params"][1]["shape"] = {0};
  m["state"][1]["shape"] = {0};
  EXPECT_TRUE(
      zeroRejects(m, {"state[1].sharded:", "param 'b' has no elements"}));
}

TEST(ZeroManifest, ShardedIsTrueOrFalse) {
  json m = zeroManifest(2);
  m["state"][0]["sharded"] = 1;
  EXPECT_TRUE(
      zeroRejects(m, {"m.json: state[0].sharded: expected true or false"}));
}

TEST(ZeroManifest, ParsesShardedParams) {
  Manifest m = parseManifest(zeroManifest(3, 3).dump(), "m.json");
  ASSERT_EQ(m.params.size(), 2u);
  // W is [4, 8] and b [4]: ceil(32 / 3) and ceil(4 / 3) elements a rank,
  // and so are their momentum buffers (of the whole params' elements).
  EXPECT_TRUE(m.params[0].sharded);
  EXPECT_EQ(m.params[0].shape, (Shape{11}));
  EXPECT_EQ(m.params[0].fullShape, (Shape{4, 8}));
  EXPECT_EQ(m.params[1].shape, (Shape{2}));
  EXPECT_EQ(m.params[1].fullShape, (Shape{4}));
  EXPECT_EQ(m.state[0].shape, (Shape{11}));
  EXPECT_EQ(m.state[1].shape, (Shape{2}));
  EXPECT_EQ(m.wholeShape(m.params[0]), (Shape{4, 8}));
  EXPECT_EQ(m.wholeShape(m.state[1]), (Shape{4}));
  // Stage 1 leaves the params whole.
  Manifest one = parseManifest(zeroManifest(3, 1).dump(), "m.json");
  EXPECT_FALSE(one.params[0].sharded);
  EXPECT_TRUE(one.params[0].fullShape.empty());
  EXPECT_EQ(one.wholeShape(one.params[0]), (Shape{4, 8}));
  EXPECT_EQ(one.wholeShape(one.state[0]), (Shape{4, 8}));
}

TEST(ZeroManifest, AShardedParamNeedsStageThree) {
  json m = zeroManifest(2, 3);
  m["zero"]["stage"] = 2;
  EXPECT_TRUE(zeroRejects(m, {"m.json: params[0].sharded: param 'W' is "
                              "sharded, but zero.stage is 2 (only stage 3 "
                              "shards params)"}));
  m = zeroManifest(2, 3);
  m.erase("zero");
  for (json &state : m["state"])
    state.erase("sharded");
  EXPECT_TRUE(zeroRejects(
      m, {"m.json: params[0].sharded: param 'W' is sharded, but the manifest "
          "has no \"zero\" object"}));
}

TEST(ZeroManifest, FullShapeComesWithShardedOnly) {
  json m = zeroManifest(2, 3);
  m["params"][1].erase("full_shape");
  EXPECT_TRUE(zeroRejects(m, {"m.json: params[1].full_shape: missing "
                              "required field (a sharded param is a rank's "
                              "slice of a tensor of this shape)"}));
  m = zeroManifest(2, 3);
  m["params"][0]["sharded"] = false;
  EXPECT_TRUE(zeroRejects(m, {"m.json: params[0].full_shape: param 'W' is "
                              "not sharded",
                              "only a ZeRO-3 param"}));
  m = zeroManifest(2, 1);
  m["params"][0]["full_shape"] = {4, 8};
  EXPECT_TRUE(zeroRejects(m, {"params[0].full_shape: param 'W' is not "
                              "sharded"}));
  m = zeroManifest(2, 3);
  m["params"][0]["full_shape"] = "4x8";
  EXPECT_TRUE(zeroRejects(m, {"m.json: params[0].full_shape: expected a list "
                              "of non-negative integers"}));
  m = zeroManifest(2, 3);
  m["params"][0]["sharded"] = "yes";
  EXPECT_TRUE(zeroRejects(m, {"m.json: params[0].sharded: expected true or "
                              "false"}));
}

TEST(ZeroManifest, AShardedParamHasTheSlicesShape) {
  // The whole shape is not a slice.
  json m = zeroManifest(2, 3);
  m["params"][0]["shape"] = {4, 8};
  EXPECT_TRUE(zeroRejects(
      m, {"m.json: params[0].shape: param 'W' is sharded over 2 ranks "
          "(zero.ranks), so it holds ceil(32 / 2) elements of the whole "
          "param (full_shape [4, 8]): expected shape [16], got [4, 8]"}));
  // Rounded down instead of up.
  m = zeroManifest(3, 3);
  m["params"][0]["shape"] = {10};
  EXPECT_TRUE(
      zeroRejects(m, {"params[0].shape:", "expected shape [11], got [10]"}));
  // A full_shape that does not match the slice.
  m = zeroManifest(2, 3);
  m["params"][1]["full_shape"] = {8};
  EXPECT_TRUE(zeroRejects(
      m, {"params[1].shape:", "ceil(8 / 2)", "expected shape [4], got [2]"}));
  m = zeroManifest(2, 3);
  m["params"][1]["full_shape"] = {0};
  EXPECT_TRUE(zeroRejects(m, {"params[1].full_shape: param 'b' is sharded, "
                              "but has no elements"}));
}

TEST(ZeroManifest, TheStateOfAShardedParamSlicesTheWholeParam) {
  // n comes from W's full_shape (32), not from its slice (11): ceil(32 / 3)
  // is 11 where ceil(11 / 3) would be 4.
  json m = zeroManifest(3, 3);
  m["state"][0]["shape"] = {4};
  EXPECT_TRUE(zeroRejects(m, {"state[0].shape:",
                              "ceil(32 / 3) elements of the state "
                              "of param 'W'",
                              "expected shape [11], got [4]"}));
}

TEST(ZeroManifest, ZeroDoesNotCombineWithCO2) {
  json m = zeroManifest(2);
  m["co2"] = {{"local_steps", 4}};
  EXPECT_TRUE(zeroRejects(m, {"m.json: zero:", "cannot also be a CO2 one"}));
}

TEST(ZeroJob, RunsOnlyOnTheRanksItSplitsTheStateOver) {
  Manifest m = parseManifest(zeroManifest(2).dump(), "m.json");
  EXPECT_NO_THROW(checkZeroJob(m, 2, false));
  EXPECT_TRUE(throwsError(
      [&] { checkZeroJob(m, 3, false); },
      {"m.json: the artifact splits its optimizer state over 2 ranks (ZeRO "
       "stage 1, zero.ranks) but the job has 3",
       "run it with --ranks 2", "recompile with loomc --dp=3 --zero=1"}));
  EXPECT_TRUE(
      throwsError([&] { checkZeroJob(m, 4, true); }, {"run it with -np 2"}));
  EXPECT_TRUE(throwsError([&] { checkZeroJob(m, 1, false); },
                          {"recompile without --dp and --zero"}));
  Manifest three = parseManifest(zeroManifest(2, 3).dump(), "m.json");
  EXPECT_TRUE(throwsError(
      [&] { checkZeroJob(three, 4, false); },
      {"splits its optimizer state and params over 2 ranks (ZeRO stage 3",
       "recompile with loomc --dp=4 --zero=3"}));
  Manifest plain = parseManifest(softmaxManifest().dump(), "m.json");
  EXPECT_NO_THROW(checkZeroJob(plain, 3, false));
}
