//===- TestUtil.cpp - Helpers shared by the runtime unit tests --*- C++ -*-===//
//
// See TestUtil.h.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "loom/runtime/Launcher.h"
#include "loom/runtime/Manifest.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace loom::rt::test {

void IdleRanks::abort(int status) { std::exit(status); }

ScopedEnv::ScopedEnv(const char *name, const char *value) : name(name) {
  if (const char *old = std::getenv(name))
    previous = old;
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (previous)
    setenv(name, previous->c_str(), 1);
  else
    unsetenv(name);
}

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/loom-rt-test-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw std::runtime_error("mkdtemp failed for " + pattern);
  dir = pattern;
}

TempDir::~TempDir() {
  std::error_code error;
  fs::remove_all(dir, error);
}

void writeBytes(const std::string &path, const std::vector<char> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

void writeText(const std::string &path, const std::string &text) {
  writeBytes(path, std::vector<char>(text.begin(), text.end()));
}

std::vector<char> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

json softmaxManifest(bool f64) {
  const std::string t = f64 ? "f64" : "f32";
  auto tensor = [&](const std::string &name, json shape, const char *dtype) {
    return json{{"name", name}, {"shape", shape}, {"dtype", dtype}};
  };
  auto arg = [&](const char *role, const std::string &name, json shape,
                 const std::string &dtype) {
    return json{
        {"role", role}, {"name", name}, {"shape", shape}, {"dtype", dtype}};
  };
  json W = tensor("W", {4, 8}, t.c_str());
  W["init"] = {{"kind", "normal"}, {"scale", 0.1}};
  W["weight_decay"] = true;
  json b = tensor("b", {4}, t.c_str());
  b["init"] = {{"kind", "zeros"}, {"scale", 0.0}};
  b["weight_decay"] = false;
  json mW = tensor("W.momentum_buffer", {4, 8}, t.c_str());
  mW["param"] = "W";
  mW["init"] = {{"kind", "zeros"}, {"scale", 0.0}};
  json mb = tensor("b.momentum_buffer", {4}, t.c_str());
  mb["param"] = "b";
  mb["init"] = {{"kind", "zeros"}, {"scale", 0.0}};

  json params = {arg("param", "W", {4, 8}, t), arg("param", "b", {4}, t)};
  json inputs = {arg("input", "x", {16, 8}, t), arg("input", "y", {16}, "i32")};
  json loss = arg("output", "loss", json::array(), t);

  json lossArgs = params;
  for (const json &a : inputs)
    lossArgs.push_back(a);
  lossArgs.push_back(loss);
  json gradArgs = lossArgs;
  gradArgs.push_back(arg("output", "grad:W", {4, 8}, t));
  gradArgs.push_back(arg("output", "grad:b", {4}, t));
  json trainArgs = params;
  trainArgs.push_back(arg("state", "W.momentum_buffer", {4, 8}, t));
  trainArgs.push_back(arg("state", "b.momentum_buffer", {4}, t));
  trainArgs.push_back(arg("step", "step", json::array(), "i64"));
  for (const json &a : inputs)
    trainArgs.push_back(a);
  trainArgs.push_back(loss);
  trainArgs.push_back(arg("output", "lr", json::array(), t));
  trainArgs.push_back(arg("output", "grad_norm", json::array(), t));

  return json{
      {"format_version", 1},
      {"generator", "SoftmaxArtifact.c"},
      {"library", "model.so"},
      {"dtype", t},
      {"model",
       {{"kind", "softmax"}, {"spec", "softmax:features=8,classes=4"}}},
      {"task",
       {{"kind", "classify"}, {"batch", 16}, {"features", 8}, {"classes", 4}}},
      {"params", {W, b}},
      {"state", {mW, mb}},
      {"inputs", {tensor("x", {16, 8}, t.c_str()), tensor("y", {16}, "i32")}},
      {"optimizer", {{"kind", "sgd"}, {"lr", 0.2}, {"momentum", 0.9}}},
      {"entries",
       {{"train_step", {{"symbol", "loom_train_step"}, {"args", trainArgs}}},
        {"loss", {{"symbol", "loom_loss"}, {"args", lossArgs}}},
        {"loss_and_grad",
         {{"symbol", "loom_loss_and_grad"}, {"args", gradArgs}}}}}};
}

json zeroManifest(int ranks, int stage) {
  json m = softmaxManifest();
  m["mesh"] = {{"axes", {"dp"}}, {"shape", {ranks}}};
  m["zero"] = {{"stage", stage}, {"ranks", ranks}};
  // A tensor becomes a rank's slice of itself, here and in the entries.
  auto shard = [&](json &tensor) {
    int64_t elements = 1;
    for (const json &size : tensor["shape"])
      elements *= size.get<int64_t>();
    const json slice = json::array({(elements + ranks - 1) / ranks});
    tensor["shape"] = slice;
    tensor["sharded"] = true;
    for (auto &[name, entry] : m["entries"].items())
      for (json &arg : entry["args"])
        if (arg["name"] == tensor["name"] && arg["role"] != "output")
          arg["shape"] = slice;
  };
  for (json &state : m["state"])
    shard(state);
  if (stage == 3)
    for (json &param : m["params"]) {
      param["full_shape"] = param["shape"];
      shard(param);
    }
  return m;
}

json bigramManifest() {
  auto arg = [](const char *role, const char *name, json shape,
                const char *dtype) {
    return json{
        {"role", role}, {"name", name}, {"shape", shape}, {"dtype", dtype}};
  };
  json W = {{"name", "W"},
            {"shape", {256, 256}},
            {"dtype", "f32"},
            {"init", {{"kind", "zeros"}, {"scale", 0.0}}}};
  json inputs = {{{"name", "tokens"}, {"shape", {4, 16}}, {"dtype", "i32"}},
                 {{"name", "targets"}, {"shape", {4, 16}}, {"dtype", "i32"}}};
  json args = {arg("param", "W", {256, 256}, "f32"),
               arg("step", "step", json::array(), "i64"),
               arg("input", "tokens", {4, 16}, "i32"),
               arg("input", "targets", {4, 16}, "i32"),
               arg("output", "loss", json::array(), "f32"),
               arg("output", "lr", json::array(), "f32"),
               arg("output", "grad_norm", json::array(), "f32")};
  return json{
      {"format_version", 1},
      {"library", "model.so"},
      {"dtype", "f32"},
      {"task", {{"kind", "lm"}, {"batch", 4}, {"seq", 16}, {"vocab", 256}}},
      {"params", {W}},
      {"state", json::array()},
      {"inputs", inputs},
      {"entries",
       {{"train_step", {{"symbol", "loom_train_step"}, {"args", args}}}}}};
}

std::string testArtifactDir() {
  const char *dir = std::getenv("LOOM_TEST_ARTIFACT_DIR");
  return dir && *dir ? dir : LOOM_TEST_ARTIFACT_DIR;
}

std::string makeArtifactDir(const std::string &parent, const std::string &name,
                            const std::string &variant, const json &manifest) {
  std::string dir = parent + "/" + name;
  fs::create_directories(dir);
  fs::copy_file(testArtifactDir() + "/" + variant + ".so", dir + "/model.so",
                fs::copy_options::overwrite_existing);
  writeText(dir + "/manifest.json", manifest.dump(2));
  return dir;
}

::testing::AssertionResult throwsError(const std::function<void()> &fn,
                                       const std::vector<std::string> &parts) {
  try {
    fn();
  } catch (const Error &e) {
    std::string message = e.what();
    for (const std::string &part : parts)
      if (message.find(part) == std::string::npos)
        return ::testing::AssertionFailure()
               << "message \"" << message << "\" lacks \"" << part << "\"";
    return ::testing::AssertionSuccess() << message;
  } catch (const std::exception &e) {
    return ::testing::AssertionFailure()
           << "threw a non-loom exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

::testing::AssertionResult
manifestRejected(const nlohmann::json &manifest,
                 const std::vector<std::string> &parts) {
  return throwsError([&] { parseManifest(manifest.dump(), "m.json"); }, parts);
}

MpiexecRun runUnderMpiexec(int ranks, const std::vector<std::string> &args) {
  LaunchOptions options;
  options.ranks = ranks;
  options.args = args;
  std::string command;
  for (const std::string &word : mpiexecCommand(defaultMpiexec(), options))
    command += "'" + word + "' ";
  MpiexecRun run;
  std::FILE *pipe = ::popen((command + "2>&1").c_str(), "r");
  if (!pipe)
    return run;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe))
    run.output.append(buffer, n);
  run.status = ::pclose(pipe);
  return run;
}

} // namespace loom::rt::test
