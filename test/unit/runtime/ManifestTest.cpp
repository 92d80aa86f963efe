//===- ManifestTest.cpp - Tests of manifest parsing and loading -*- C++ -*-===//
//
// A valid manifest parses into the expected structure, and every kind of
// error names the JSON path of the bad field.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Manifest.h"
#include "TestUtil.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/ManifestSchema.h"
#include "manifest/NotedKeys.h"

#include <set>

using namespace loom::rt;
using namespace loom::rt::test;
using nlohmann::json;

namespace {

::testing::AssertionResult rejects(const json &manifest,
                                   const std::vector<std::string> &parts) {
  return manifestRejected(manifest, parts);
}

} // namespace

TEST(Manifest, ParsesTheSoftmaxManifest) {
  Manifest m = parseManifest(softmaxManifest().dump(), "m.json");
  EXPECT_EQ(m.formatVersion, 1);
  EXPECT_EQ(m.library, "model.so");
  EXPECT_EQ(m.dtype, DType::F64);
  EXPECT_EQ(m.modelSpec, "softmax:features=8,classes=4");
  EXPECT_EQ(m.task.kind, TaskSpec::Kind::Classify);
  EXPECT_EQ(m.task.batch, 16);
  EXPECT_EQ(m.task.tokensPerStep(), 16);
  ASSERT_EQ(m.params.size(), 2u);
  EXPECT_EQ(m.params[0].name, "W");
  EXPECT_EQ(m.params[0].shape, (Shape{4, 8}));
  EXPECT_EQ(m.params[0].init.kind, InitSpec::Kind::Normal);
  EXPECT_DOUBLE_EQ(m.params[0].init.scale, 0.1);
  EXPECT_FALSE(m.params[1].weightDecay);
  ASSERT_EQ(m.state.size(), 2u);
  EXPECT_EQ(m.state[0].param, "W");
  ASSERT_EQ(m.entries.size(), 3u);
  const EntrySpec *train = m.findEntry("train_step");
  ASSERT_TRUE(train);
  EXPECT_EQ(train->symbol, "loom_train_step");
  ASSERT_EQ(train->args.size(), 10u);
  EXPECT_EQ(train->args[4].role, ArgRole::Step);
  EXPECT_TRUE(train->findOutput("grad_norm"));
  EXPECT_FALSE(train->findOutput("W"));
}

TEST(Manifest, RejectsInvalidJson) {
  EXPECT_TRUE(
      throwsError([] { parseManifest("{\"format_version\": 1,", "m.json"); },
                  {"m.json", "invalid JSON"}));
}

TEST(Manifest, RejectsOtherFormatVersions) {
  json m = softmaxManifest();
  m["format_version"] = 2;
  EXPECT_TRUE(
      rejects(m, {"m.json: format_version:", "version 2", "reads version 1"}));
  m.erase("format_version");
  EXPECT_TRUE(rejects(m, {"format_version: missing required field"}));
}

TEST(Manifest, ErrorsNameTheBadField) {
  json m = softmaxManifest();
  m["params"][1]["shape"] = "4";
  EXPECT_TRUE(rejects(m, {"params[1].shape:", "non-negative integers"}));

  m = softmaxManifest();
  m["params"][0]["dtype"] = "f16";
  EXPECT_TRUE(rejects(m, {"params[0].dtype:", "unknown dtype \"f16\""}));

  m = softmaxManifest();
  m["params"][0]["init"]["kind"] = "xavier";
  EXPECT_TRUE(rejects(m, {"params[0].init.kind:", "xavier"}));

  m = softmaxManifest();
  m["params"][0].erase("init");
  EXPECT_TRUE(rejects(m, {"params[0].init: missing required field"}));

  m = softmaxManifest();
  m["task"]["kind"] = "regression";
  EXPECT_TRUE(rejects(m, {"task.kind:", "regression"}));

  m = softmaxManifest();
  m["task"] = {{"kind", "lm"}, {"batch", 4}, {"vocab", 256}};
  EXPECT_TRUE(rejects(m, {"task.seq: missing required field"}));

  m = softmaxManifest();
  m["task"]["batch"] = 0;
  EXPECT_TRUE(rejects(m, {"task.batch:", "at least 1"}));

  m = softmaxManifest();
  m["state"][1]["param"] = "c";
  EXPECT_TRUE(rejects(m, {"state[1].param:", "'c'", "not a param"}));

  m = softmaxManifest();
  m["state"][0]["name"] = "W";
  EXPECT_TRUE(rejects(m, {"state[0].name:", "duplicate tensor name 'W'"}));

  m = softmaxManifest();
  m.erase("library");
  EXPECT_TRUE(rejects(m, {"library: missing required field"}));
}

TEST(Manifest, InputsMustMatchTheTask) {
  json m = softmaxManifest();
  m["inputs"][0]["shape"] = {16, 9};
  EXPECT_TRUE(rejects(m, {"inputs[0].shape:", "must have shape [16, 8]"}));

  m = softmaxManifest();
  m["inputs"][1]["name"] = "labels";
  EXPECT_TRUE(rejects(m, {"inputs[1].name:", "'labels'", "expected x, y"}));

  m = softmaxManifest();
  m["inputs"].erase(1);
  EXPECT_TRUE(rejects(m, {"inputs:", "needs an input named 'y'"}));
}

TEST(Manifest, LabelCountsFitTheLabelType) {
  // Labels are i32; 2^62 classes once crashed the synthetic data's teacher.
  json m = softmaxManifest();
  m["task"]["classes"] = 3000000000LL;
  EXPECT_TRUE(rejects(m, {"task.classes:", "must be at most 2147483647"}));
  m = softmaxManifest();
  m["task"]["classes"] = 2147483647;
  EXPECT_EQ(parseManifest(m.dump(), "m.json").task.classes, 2147483647);
}

TEST(Manifest, TaskNoneAcceptsAnyInputs) {
  json m = softmaxManifest();
  m["task"] = {{"kind", "none"}};
  Manifest parsed = parseManifest(m.dump(), "m.json");
  EXPECT_EQ(parsed.task.kind, TaskSpec::Kind::None);
  EXPECT_EQ(parsed.inputs.size(), 2u);
  EXPECT_EQ(parsed.task.tokensPerStep(), 1);
}

TEST(Manifest, EntryArgumentsMustMatchDeclarations) {
  json m = softmaxManifest();
  m["entries"]["train_step"]["args"][2]["role"] = "buffer";
  EXPECT_TRUE(rejects(m, {"entries.train_step.args[2].role:", "buffer"}));

  m = softmaxManifest();
  m["entries"]["loss"]["args"][0]["name"] = "V";
  EXPECT_TRUE(rejects(m, {"entries.loss.args[0].name:", "param 'V'",
                          "not declared in params"}));

  m = softmaxManifest();
  m["entries"]["loss"]["args"][1]["shape"] = {5};
  EXPECT_TRUE(
      rejects(m, {"entries.loss.args[1]:", "[5] f64 here but [4] f64"}));

  m = softmaxManifest();
  m["entries"]["loss"]["args"][4]["dtype"] = "f32";
  EXPECT_TRUE(rejects(m, {"output 'loss'", "in another entry"}));

  m = softmaxManifest();
  m["entries"]["train_step"]["args"][4]["dtype"] = "i32";
  EXPECT_TRUE(rejects(m, {"entries.train_step.args[4]:", "i64 scalar"}));

  m = softmaxManifest();
  m["entries"]["loss"]["args"][1] = m["entries"]["loss"]["args"][0];
  EXPECT_TRUE(rejects(m, {"entries.loss.args[1].name:", "passed twice"}));

  m = softmaxManifest();
  m["entries"]["loss"].erase("symbol");
  EXPECT_TRUE(rejects(m, {"entries.loss.symbol: missing required field"}));
}

TEST(Artifact, LoadErrorsNameTheProblem) {
  TempDir tmp;
  EXPECT_TRUE(throwsError([&] { Artifact::load(tmp.file("nope")); },
                          {"does not exist"}));
  EXPECT_TRUE(throwsError([&] { Artifact::load(tmp.path()); },
                          {"is not a Loom artifact", "manifest.json"}));

  json m = softmaxManifest();
  m["library"] = "missing.so";
  std::string dir = makeArtifactDir(tmp.path(), "a", "softmax_f64", m);
  EXPECT_TRUE(throwsError([&] { Artifact::load(dir); },
                          {"library:", "missing.so does not exist"}));

  m = softmaxManifest();
  m["entries"]["loss"]["symbol"] = "loom_nope";
  dir = makeArtifactDir(tmp.path(), "b", "softmax_f64", m);
  EXPECT_TRUE(
      throwsError([&] { Artifact::load(dir); },
                  {"entries.loss.symbol:", "does not export 'loom_nope'"}));

  dir = makeArtifactDir(tmp.path(), "c", "softmax_f64", softmaxManifest());
  writeText(dir + "/model.so", "not an ELF file");
  EXPECT_TRUE(
      throwsError([&] { Artifact::load(dir); }, {"cannot load", "model.so"}));
}

TEST(Artifact, BindsBuffersOncePerName) {
  TempDir tmp;
  std::unique_ptr<Artifact> artifact = Artifact::load(
      makeArtifactDir(tmp.path(), "a", "softmax_f64", softmaxManifest()));
  EXPECT_EQ(artifact->params().size(), 2u);
  EXPECT_EQ(artifact->state().size(), 2u);
  EXPECT_EQ(artifact->inputs().size(), 2u);
  // "loss" is an output of all three entries and shares one buffer.
  Tensor &loss = artifact->tensor("loss");
  EXPECT_EQ(loss.role(), ArgRole::Output);
  for (Tensor *param : artifact->params())
    EXPECT_EQ(reinterpret_cast<uintptr_t>(param->data()) % 64, 0u);
  EXPECT_TRUE(artifact->hasEntry("loss_and_grad"));
  EXPECT_TRUE(
      throwsError([&] { artifact->entry("eval"); }, {"has no 'eval' entry"}));
}

TEST(Manifest, ParsesTheMesh) {
  json m = softmaxManifest();
  EXPECT_TRUE(parseManifest(m.dump(), "m.json").mesh.axes.empty());
  EXPECT_EQ(parseManifest(m.dump(), "m.json").mesh.ranks(), 1);
  m["mesh"] = {{"axes", {"dp", "tp"}}, {"shape", {2, 3}}};
  Manifest parsed = parseManifest(m.dump(), "m.json");
  EXPECT_EQ(parsed.mesh.axes, (std::vector<std::string>{"dp", "tp"}));
  EXPECT_EQ(parsed.mesh.ranks(), 6);
  EXPECT_EQ(parsed.mesh.describe(), "dp=2,tp=3");
}

// A rank reads the batches of its coordinate along "dp" (row-major mesh):
// the two ranks of a zeroth-order perturbation pair ("pert", innermost)
// read the same ones; without a "dp" axis every rank its own.
TEST(Manifest, DataPositionFollowsTheDpAxis) {
  MeshSpec none, dp4{{"dp"}, {4}}, pairs{{"dp", "pert"}, {3, 2}},
      outer{{"pp", "dp"}, {2, 3}};
  EXPECT_EQ(none.dataPosition(0, 1), std::make_pair(int64_t(0), int64_t(1)));
  EXPECT_EQ(dp4.dataPosition(3, 4), std::make_pair(int64_t(3), int64_t(4)));
  for (int64_t rank = 0; rank < 6; ++rank) {
    EXPECT_EQ(pairs.dataPosition(rank, 6),
              std::make_pair(rank / 2, int64_t(3)));
    EXPECT_EQ(outer.dataPosition(rank, 6),
              std::make_pair(rank % 3, int64_t(3)));
  }
}

TEST(Manifest, RejectsBadMeshes) {
  json m = softmaxManifest();
  m["mesh"] = {{"axes", {"dp"}}, {"shape", {2, 2}}};
  EXPECT_TRUE(rejects(m, {"mesh:", "1 names but shape has 2 sizes"}));
  m["mesh"] = {{"axes", {"dp"}}, {"shape", {0}}};
  EXPECT_TRUE(rejects(m, {"mesh.shape[0]:", "at least 1"}));
  m["mesh"] = {{"axes", {"dp", "dp"}}, {"shape", {2, 2}}};
  EXPECT_TRUE(rejects(m, {"mesh.axes[1]:", "duplicate axis \"dp\""}));
  m["mesh"] = {{"axes", json::array()}, {"shape", json::array()}};
  EXPECT_TRUE(rejects(m, {"mesh.axes:", "at least one axis"}));
  m["mesh"] = {{"shape", {2}}};
  EXPECT_TRUE(rejects(m, {"mesh.axes: missing required field"}));
  m["mesh"] = {{"axes", {"dp"}}, {"shape", {1 << 21}}};
  EXPECT_TRUE(rejects(m, {"mesh.shape[0]:", "implausibly large"}));
}

TEST(Manifest, ParsesTheTarget) {
  json m = softmaxManifest();
  Manifest parsed = parseManifest(m.dump(), "m.json");
  EXPECT_EQ(parsed.target, Target::CPU); // absent: cpu
  m["target"] = "cpu";
  EXPECT_EQ(parseManifest(m.dump(), "m.json").target, Target::CPU);
  m["target"] = "cuda";
  m["cuda"] = {{"chip", "sm_90"}};
  parsed = parseManifest(m.dump(), "m.json");
  EXPECT_EQ(parsed.target, Target::CUDA);
  EXPECT_EQ(parsed.cuda.chip, "sm_90");
  EXPECT_EQ(parsed.cuda.major, 9);
  EXPECT_EQ(parsed.cuda.minor, 0);
  m["cuda"] = {{"chip", "sm_86"}};
  parsed = parseManifest(m.dump(), "m.json");
  EXPECT_EQ(parsed.cuda.major, 8);
  EXPECT_EQ(parsed.cuda.minor, 6);
  m["cuda"] = {{"chip", "sm_90a"}}; // arch-specific features
  EXPECT_EQ(parseManifest(m.dump(), "m.json").cuda.major, 9);
  m["cuda"] = {{"chip", "sm_100"}};
  parsed = parseManifest(m.dump(), "m.json");
  EXPECT_EQ(parsed.cuda.major, 10);
  EXPECT_EQ(parsed.cuda.minor, 0);
}

TEST(Manifest, RejectsBadTargets) {
  json m = softmaxManifest();
  m["target"] = "tpu";
  EXPECT_TRUE(rejects(m, {"m.json: target:", "unknown target \"tpu\"",
                          "expected cpu or cuda"}));
  m["target"] = 1;
  EXPECT_TRUE(rejects(m, {"target:", "expected a string"}));
  m["target"] = "cuda";
  EXPECT_TRUE(rejects(m, {"cuda: missing required field", "sm_90"}));
  m["cuda"] = {{"chip", "90"}};
  EXPECT_TRUE(rejects(m, {"cuda.chip:", "such as \"sm_90\"", "\"90\""}));
  m["cuda"] = {{"chip", "sm_9"}};
  EXPECT_TRUE(rejects(m, {"cuda.chip:"}));
  m["cuda"] = {{"chip", "sm_90xy"}};
  EXPECT_TRUE(rejects(m, {"cuda.chip:"}));
  m["cuda"] = json::object();
  EXPECT_TRUE(rejects(m, {"cuda.chip: missing required field"}));
  m["cuda"] = "sm_90";
  EXPECT_TRUE(rejects(m, {"cuda:", "expected an object"}));
  m = softmaxManifest();
  m["cuda"] = {{"chip", "sm_90"}};
  EXPECT_TRUE(rejects(m, {"cuda:", "only a cuda artifact"}));
}

// The cases below were found by loom-fuzz-manifest (runtime/fuzz) or while
// writing it.

TEST(Manifest, RejectsNumbersBeyondADouble) {
  // nlohmann::json throws out_of_range, not parse_error, for these; it used
  // to escape the parser and end the program.
  std::string text = softmaxManifest().dump();
  text.insert(1, "\"scale\": 1e309, ");
  EXPECT_TRUE(throwsError([&] { parseManifest(text, "m.json"); },
                          {"m.json: invalid JSON", "number overflow"}));
}

TEST(Manifest, RejectsDeepNesting) {
  // Error messages print the bad value, and printing recurses: a million
  // brackets used to overflow the stack.
  std::string text = softmaxManifest().dump();
  text.insert(1, "\"mesh\": " + std::string(1000000, '[') +
                     std::string(1000000, ']') + ", ");
  EXPECT_TRUE(throwsError([&] { parseManifest(text, "m.json"); },
                          {"m.json: invalid JSON", "nested deeper than 128"}));
}

TEST(Manifest, RejectsDuplicateKeys) {
  std::string text = softmaxManifest().dump();
  text.insert(1, "\"format_version\": 2, ");
  EXPECT_TRUE(throwsError(
      [&] { parseManifest(text, "m.json"); },
      {"m.json: invalid JSON", "duplicate key \"format_version\""}));
}

TEST(Manifest, RejectsShapesWhoseSizeOverflows) {
  // The loader multiplies the dimensions in int64_t.
  json m = softmaxManifest();
  m["params"][0]["shape"] = {4294967296, 4294967296};
  EXPECT_TRUE(rejects(m, {"m.json: params[0].shape:", "implausibly large"}));
  m = softmaxManifest();
  m["entries"]["train_step"]["args"][0]["shape"] = {4294967296, 4294967296, 0};
  EXPECT_TRUE(
      rejects(m, {"entries.train_step.args[0].shape:", "implausibly large"}));
}

TEST(Manifest, RejectsMeshesWhoseRankCountOverflows) {
  // Four axes of 2^20 are 2^80 ranks, which used to overflow to 0 and pass.
  json m = softmaxManifest();
  m["mesh"] = {{"axes", {"a", "b", "c", "d"}},
               {"shape", {1 << 20, 1 << 20, 1 << 20, 1 << 20}}};
  EXPECT_TRUE(rejects(m, {"mesh.shape:", "more than 2^20 ranks"}));
}

TEST(Manifest, RejectsCO2ShardsWhoseRoundBufferOverflows) {
  // The trainer allocates shard_elements x ranks elements.
  json m = softmaxManifest();
  m["mesh"] = {{"axes", {"dp"}}, {"shape", {4}}};
  m["co2"] = {{"local_steps", 2},
              {"sharded", true},
              {"shard_elements", int64_t(1) << 62},
              {"params", {"w"}}};
  EXPECT_TRUE(rejects(
      m, {"m.json: co2.shard_elements:", "x 4 ranks", "implausibly large"}));
}

namespace {

/// The softmax manifest, sharded CO2 over two ranks: W and b flatten to 36
/// elements, the loss slot makes 37, so each rank's shard has 19.
json shardedManifest() {
  json m = softmaxManifest();
  m["mesh"] = {{"axes", {"dp"}}, {"shape", {2}}};
  m["co2"] = {{"local_steps", 2},
              {"sharded", true},
              {"shard_elements", 19},
              {"params", {"W", "b"}},
              {"layout",
               {{{"offset", 0}, {"elements", 19}},
                {{"offset", 19}, {"elements", 17}}}}};
  return m;
}

} // namespace

TEST(Manifest, ParsesTheCO2ShardLayout) {
  Manifest m = parseManifest(shardedManifest().dump(), "m.json");
  ASSERT_EQ(m.co2.layout.size(), 2u);
  EXPECT_EQ(m.co2.layout[1].offset, 19);
  EXPECT_EQ(m.co2.layout[1].elements, 17);
  EXPECT_EQ(m.co2.paramElements(), 36);
  EXPECT_EQ(m.co2.lossSlot(), (std::pair<int, int64_t>{1, 17}));

  // 38 elements and the loss slot fill rank 0 and start rank 1's shard.
  json full = shardedManifest();
  full["co2"]["layout"][1]["elements"] = 0;
  m = parseManifest(full.dump(), "m.json");
  EXPECT_EQ(m.co2.lossSlot(), (std::pair<int, int64_t>{1, 0}));
}

TEST(Manifest, RejectsInconsistentCO2ShardLayouts) {
  json m = shardedManifest();
  m["co2"].erase("layout");
  EXPECT_TRUE(rejects(
      m, {"m.json: co2.layout: missing required field", "older loomc"}));
  m = shardedManifest();
  m["co2"]["layout"].erase(1);
  EXPECT_TRUE(rejects(m, {"co2.layout:", "1 slices", "mesh has 2 ranks"}));
  m = shardedManifest();
  m["co2"]["layout"][1]["offset"] = 17;
  EXPECT_TRUE(
      rejects(m, {"co2.layout[1].offset:", "expected 1 x "
                                           "co2.shard_elements = 19, got 17"}));
  m = shardedManifest();
  m["co2"]["layout"][1]["elements"] = 20;
  EXPECT_TRUE(rejects(m, {"co2.layout[1].elements:", "more than"}));
  m = shardedManifest();
  m["co2"]["layout"][0]["elements"] = 18;
  EXPECT_TRUE(rejects(m, {"co2.layout[1].elements:", "must be empty"}));
  m = shardedManifest();
  m["co2"]["layout"][1]["elements"] = 19;
  EXPECT_TRUE(rejects(m, {"co2.layout:", "no room for the loss slot"}));
  m = shardedManifest();
  m["co2"]["layout"][0].erase("offset");
  EXPECT_TRUE(rejects(m, {"co2.layout[0].offset: missing required field"}));
  m = shardedManifest();
  m["co2"]["layout"][0]["elements"] = -1;
  EXPECT_TRUE(rejects(m, {"co2.layout[0].elements:", "at least 0"}));
}

namespace {

/// The softmax manifest with gradient compression of W (4 x 8).
json compressedManifest() {
  json m = softmaxManifest();
  m["compression"] = {{"method", "lgreco"},
                      {"rank", 2},
                      {"bits", 8},
                      {"density", 0.01},
                      {"warmup_steps", 5},
                      {"resolve_every", 10},
                      {"objective", "bytes"},
                      {"link_gbps", 0.1},
                      {"link_latency_us", 200},
                      {"slots", {{{"param", "W"}, {"rows", 4}, {"cols", 8}}}}};
  return m;
}

} // namespace

TEST(Manifest, ReadsTheGradientCompression) {
  Manifest m = parseManifest(compressedManifest().dump(), "m.json");
  ASSERT_TRUE(m.compression.enabled());
  EXPECT_EQ(m.compression.method, "lgreco");
  EXPECT_EQ(m.compression.objective, "bytes");
  EXPECT_EQ(m.compression.warmupSteps, 5);
  EXPECT_DOUBLE_EQ(m.compression.linkGbps, 0.1);
  ASSERT_EQ(m.compression.slots.size(), 1u);
  EXPECT_EQ(m.compression.slots[0].param, "W");
  EXPECT_EQ(m.compression.slots[0].cols, 8);
  EXPECT_FALSE(
      parseManifest(softmaxManifest().dump(), "m.json").compression.enabled());
  // Artifacts from before the error measure was written measured absolute
  // errors.
  EXPECT_EQ(m.compression.errorMeasure, "absolute");
  json relative = compressedManifest();
  relative["compression"]["error"] = "relative";
  EXPECT_EQ(parseManifest(relative.dump(), "m.json").compression.errorMeasure,
            "relative");
}

TEST(Manifest, RefusesABadGradientCompression) {
  json m = compressedManifest();
  m["compression"]["method"] = "zip";
  EXPECT_TRUE(rejects(m, {"compression.method:", "unknown method \"zip\""}));
  m = compressedManifest();
  m["compression"]["slots"][0]["param"] = "V";
  EXPECT_TRUE(
      rejects(m, {"compression.slots[0].param:", "no param named \"V\""}));
  m = compressedManifest();
  m["compression"]["slots"][0]["rows"] = 3;
  EXPECT_TRUE(
      rejects(m, {"compression.slots[0]:", "has shape [4, 8], not 3 x 8"}));
  m = compressedManifest();
  m["compression"]["warmup_steps"] = 0;
  EXPECT_TRUE(
      rejects(m, {"compression.warmup_steps:", "at least one warm-up"}));
  m = compressedManifest();
  m["compression"]["objective"] = "speed";
  EXPECT_TRUE(rejects(m, {"compression.objective:", "\"time\" or \"bytes\""}));
  m = compressedManifest();
  m["compression"]["link_gbps"] = 0;
  EXPECT_TRUE(rejects(m, {"compression.link_gbps:", "must be positive"}));
  m = compressedManifest();
  m["compression"]["error"] = "squared";
  EXPECT_TRUE(
      rejects(m, {"compression.error:", "\"relative\" or \"absolute\""}));
  m = compressedManifest();
  m["compression"].erase("slots");
  EXPECT_TRUE(rejects(m, {"compression.slots: missing required field"}));
}

// ManifestSchema.def marks each key Read (the runtime parses it) or Info
// (it ignores it). The parser notes every key it looks up, by the address
// of its name in ManifestSchema.h, over manifests that between them take
// every branch that reads a key: a key marked Read that the parser never
// looks up, a key marked Info that it does, or a key looked up that is not
// in the schema (a string of its own) fails here.
namespace {

constexpr bool Read = true, Info = false;

struct SchemaKey {
  const char *object;
  const char *name;
  bool read;
};

const SchemaKey kSchema[] = {
#define LOOM_MANIFEST_KEY(Object, Key, Type, Use)                              \
  {#Object, loom::manifest::Object::Key, Use},
#include "loom/runtime/ManifestSchema.def"
};

/// What the parser looks up over manifests that have every key it reads.
std::set<const char *> keysTheParserReads() {
  std::set<const char *> read;
  json cuda = shardedManifest();
  cuda["library_sha256"] = std::string(64, 'a');
  cuda["target"] = "cuda";
  cuda["cuda"] = {{"chip", "sm_90"}};
  cuda["compile_options"] = {{"precision", "f32"}};
  json none = softmaxManifest();
  none["task"] = {{"kind", "none"}, {"batch", 16}};
  for (const json &m :
       {cuda, bigramManifest(), none, zeroManifest(2, 3), compressedManifest(),
        tensorParallelManifest(), pipelineManifest()})
    parseManifestNotingKeys(m.dump(), "m.json", read);
  return read;
}

} // namespace

TEST(ManifestSchema, TheRuntimeReadsExactlyTheKeysMarkedRead) {
  std::set<const char *> read = keysTheParserReads();
  std::set<const char *> known;
  for (const SchemaKey &key : kSchema) {
    known.insert(key.name);
    EXPECT_EQ(read.count(key.name) != 0, key.read)
        << key.object << "." << key.name << " is marked "
        << (key.read ? "Read" : "Info") << " in ManifestSchema.def, but the "
        << "runtime " << (key.read ? "never reads it" : "reads it");
  }
  for (const char *name : read)
    EXPECT_TRUE(known.count(name))
        << "the runtime reads \"" << name
        << "\", which is not a name of ManifestSchema.h";
}
