//===- ManifestLayoutsTest.cpp - Manifests of tp, pp and ZeRO layouts ----===//
//
// A tensor-parallel, pipelined or ZeRO-over-tp manifest parses into the
// splits, stages and slices the runtime places tensors by, and a bad one
// names the JSON path of its bad field.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Manifest.h"

#include <array>

using namespace loom::rt;
using namespace loom::rt::test;
using nlohmann::json;

/// softmaxManifest with W [4, 8] split along its columns over 2 tp ranks:
/// each rank holds [4, 4] of W and of its momentum.
json loom::rt::test::tensorParallelManifest() {
  json m = softmaxManifest();
  m["mesh"] = {{"axes", {"dp", "tp"}}, {"shape", {1, 2}}};
  const json split = {{"dim", 1}, {"blocks", 1}, {"axis", "tp"}};
  for (json *list : {&m["params"], &m["state"]})
    for (json &t : *list)
      if (t["name"] == "W" || t["name"] == "W.momentum_buffer") {
        t["shape"] = {4, 4};
        t["tensor_split"] = split;
      }
  for (auto &[name, entry] : m["entries"].items())
    for (json &arg : entry["args"])
      if (arg["name"] == "W" || arg["name"] == "W.momentum_buffer")
        arg["shape"] = {4, 4};
  return m;
}

TEST(Manifest, ParsesTensorSplits) {
  Manifest m = parseManifest(tensorParallelManifest().dump(), "m.json");
  const TensorSpec &W = *m.findParam("W");
  EXPECT_EQ(W.split.dim, 1);
  EXPECT_EQ(W.split.blocks, 1);
  EXPECT_EQ(W.split.parts, 2);
  EXPECT_EQ(m.wholeShape(W), (Shape{4, 8}));
  EXPECT_EQ(m.wholeShape(*m.findState("W.momentum_buffer")), (Shape{4, 8}));
  EXPECT_FALSE(m.findParam("b")->split.enabled());
}

TEST(Manifest, RejectsBadTensorSplits) {
  json m = tensorParallelManifest();
  m["params"][0]["tensor_split"]["axis"] = "pp";
  EXPECT_TRUE(manifestRejected(m, {"params[0].tensor_split.axis:",
                                   "\"pp\" is not an axis of the mesh"}));
  m = tensorParallelManifest();
  m["params"][0]["tensor_split"]["dim"] = 2;
  EXPECT_TRUE(
      manifestRejected(m, {"params[0].tensor_split:",
                           "dimension 2 of [4, 4] is not 1 equal blocks"}));
  m = tensorParallelManifest();
  m["params"][0]["tensor_split"]["blocks"] = 3;
  EXPECT_TRUE(
      manifestRejected(m, {"dimension 1 of [4, 4] is not 3 equal blocks"}));
  m = tensorParallelManifest();
  m["params"][0]["tensor_split"].erase("dim");
  EXPECT_TRUE(manifestRejected(
      m, {"params[0].tensor_split.dim: missing required field"}));
  m = tensorParallelManifest();
  m["state"][0].erase("tensor_split");
  EXPECT_TRUE(
      manifestRejected(m, {"state[0]:", "the state of param 'W' must be "
                                        "split as the param is"}));
  m = tensorParallelManifest();
  m["state"][0]["tensor_split"]["dim"] = 0;
  EXPECT_TRUE(manifestRejected(
      m, {"state[0].tensor_split:", "must be split as the param is"}));
}

/// tensorParallelManifest on dp=2 x tp=2 with ZeRO-1: W's momentum on each
/// rank is its dp slice of its tp part, [8] of the part's [4, 4].
static json zeroTensorParallelManifest() {
  json m = tensorParallelManifest();
  m["mesh"] = {{"axes", {"dp", "tp"}}, {"shape", {2, 2}}};
  m["zero"] = {{"stage", 1}, {"ranks", 2}};
  for (json &t : m["state"]) {
    t["sharded"] = true;
    t["shape"] = t["name"] == "W.momentum_buffer" ? json{8} : json{2};
  }
  for (auto &[name, entry] : m["entries"].items())
    for (json &arg : entry["args"])
      if (arg["name"] == "W.momentum_buffer")
        arg["shape"] = {8};
      else if (arg["name"] == "b.momentum_buffer")
        arg["shape"] = {2};
  return m;
}

TEST(Manifest, ShardsTensorParallelPartsOverDp) {
  Manifest m = parseManifest(zeroTensorParallelManifest().dump(), "m.json");
  const TensorSpec &momentum = *m.findState("W.momentum_buffer");
  EXPECT_EQ(m.wholeShape(momentum), (Shape{4, 8}));
  EXPECT_FALSE(m.zeroSavesShards()); // the checkpoint holds whole tensors
  // Rank 3 is dp 1, tp 1: part 1 (columns 4..7), its rows 2 and 3.
  EXPECT_EQ(m.zeroRank(3), 1);
  Tensor tensor("W.momentum_buffer", ArgRole::State, {8}, DType::F32);
  SliceOf slice = sliceOf(m, tensor, 3);
  EXPECT_EQ(slice.part, 1);
  EXPECT_EQ(slice.first, 8);
  std::vector<std::vector<int64_t>> runs;
  slice.forEachRun(8, [&](int64_t whole, int64_t at, int64_t length) {
    runs.push_back({whole, at, length});
  });
  EXPECT_EQ(runs, (std::vector<std::vector<int64_t>>{{20, 0, 4}, {28, 4, 4}}));
  EXPECT_EQ(slice.wholeIndex(5), 29);
  // b (not split, [4]): dp rank 1 holds its last 2 elements, whatever its
  // tp coordinate; no element past the end.
  Tensor bias("b.momentum_buffer", ArgRole::State, {2}, DType::F32);
  EXPECT_EQ(sliceOf(m, bias, 2).first, 2);
  EXPECT_EQ(sliceOf(m, bias, 3).first, 2);
  EXPECT_EQ(sliceOf(m, bias, 3).available(4), 2);
}

TEST(Manifest, RejectsZeroOverOtherThanDp) {
  json m = zeroTensorParallelManifest();
  m["zero"]["ranks"] = 4;
  EXPECT_TRUE(
      manifestRejected(m, {"zero.ranks:", "4 ranks, but the artifact runs on 4",
                           "over the ranks of the mesh's dp axis"}));
}

/// softmaxManifest pipelined over 2 stages: W on the first, b on the last.
json loom::rt::test::pipelineManifest() {
  json m = softmaxManifest();
  m["mesh"] = {{"axes", {"dp", "pp"}}, {"shape", {1, 2}}};
  m["pipeline"] = {{"stages", 2}, {"micro_batches", 4}, {"axis", "pp"}};
  for (json *list : {&m["params"], &m["state"]})
    for (json &t : *list)
      t["pipeline_stages"] =
          t["name"].get<std::string>().rfind("W", 0) == 0 ? json{0} : json{1};
  return m;
}

TEST(Manifest, ParsesPipelines) {
  Manifest m = parseManifest(pipelineManifest().dump(), "m.json");
  EXPECT_TRUE(m.pipeline.enabled());
  EXPECT_EQ(m.pipeline.stages, 2);
  EXPECT_EQ(m.pipeline.microBatches, 4);
  EXPECT_EQ(m.pipeline.axis, "pp");
  EXPECT_EQ(m.findParam("W")->pipelineStages, (std::vector<int64_t>{0}));
  EXPECT_EQ(m.findParam("b")->pipelineStages, (std::vector<int64_t>{1}));
  EXPECT_FALSE(
      parseManifest(softmaxManifest().dump(), "m.json").pipeline.enabled());
}

TEST(Manifest, RejectsBadPipelines) {
  json m = pipelineManifest();
  m["pipeline"]["axis"] = "tp";
  EXPECT_TRUE(
      manifestRejected(m, {"pipeline.axis:", "\"tp\" is not a mesh axis of 2 "
                                             "ranks (the stages)"}));
  m = pipelineManifest();
  m["pipeline"]["stages"] = 3;
  EXPECT_TRUE(
      manifestRejected(m, {"pipeline.axis:", "not a mesh axis of 3 ranks"}));
  m = pipelineManifest();
  m["params"][0]["pipeline_stages"] = {2};
  EXPECT_TRUE(manifestRejected(m, {"params[0].pipeline_stages[0]:",
                                   "stages are increasing and below 2"}));
  m = pipelineManifest();
  m["params"][0].erase("pipeline_stages");
  EXPECT_TRUE(manifestRejected(m, {"params[0]:",
                                   "a tensor of a pipelined artifact needs "
                                   "pipeline_stages"}));
  m = pipelineManifest();
  m["state"][0]["pipeline_stages"] = {0, 1};
  EXPECT_TRUE(
      manifestRejected(m, {"state[0].pipeline_stages:",
                           "is held by the stages that hold the param"}));
  m = softmaxManifest();
  m["params"][0]["pipeline_stages"] = {0};
  EXPECT_TRUE(manifestRejected(
      m, {"params[0].pipeline_stages:", "pipeline_stages without a pipeline"}));
}

TEST(Manifest, APartIsRunsOfTheWholeTensor) {
  // Rows of a fused [6, 2] weight in 3 blocks over 2 ranks: rank 1 holds
  // rows 1, 3 and 5.
  SliceOf rows{{6, 2}, 0};
  rows.split = TensorSplitSpec{0, 3, 2, "tp"};
  rows.part = 1;
  std::vector<std::array<int64_t, 3>> runs;
  rows.forEachRun(6, [&](int64_t whole, int64_t at, int64_t length) {
    runs.push_back({whole, at, length});
  });
  EXPECT_EQ(runs, (std::vector<std::array<int64_t, 3>>{
                      {2, 0, 2}, {6, 2, 2}, {10, 4, 2}}));
  EXPECT_EQ(rows.wholeIndex(3), 7);
  // Columns 2 and 3 of a [2, 4] weight.
  SliceOf cols{{2, 4}, 0};
  cols.split = TensorSplitSpec{1, 1, 2, "tp"};
  cols.part = 1;
  runs.clear();
  cols.forEachRun(4, [&](int64_t whole, int64_t at, int64_t length) {
    runs.push_back({whole, at, length});
  });
  EXPECT_EQ(runs, (std::vector<std::array<int64_t, 3>>{{2, 0, 2}, {6, 2, 2}}));
  EXPECT_EQ(cols.wholeIndex(2), 6);
}
