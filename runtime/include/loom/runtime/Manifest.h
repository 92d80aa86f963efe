//===- Manifest.h - The parsed manifest.json of an artifact -----*- C++ -*-===//
//
// docs/artifact.md describes the schema and ManifestSchema.def lists its
// keys; this is its in-memory form. Parsing checks every field the runtime
// relies on (types, shapes, cross references between entries and the
// tensor lists) so that later code can trust the manifest, and every error
// names the file and the JSON path of the offending field.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_MANIFEST_H
#define LOOM_RUNTIME_MANIFEST_H

#include "loom/runtime/DType.h"
#include "loom/runtime/Target.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace loom::rt {

struct InitSpec {
  enum class Kind { Zeros, Ones, Normal, Uniform };
  Kind kind = Kind::Zeros;
  /// Standard deviation for Normal, half-width for Uniform.
  double scale = 0.0;
};

/// A tensor split by tensor parallelism (manifest tensor_split, the IR's
/// #loom.tensor_split): one rank's part of a whole tensor whose dimension
/// `dim` is `parts` times larger. That dimension of the whole is `blocks`
/// equal blocks, each cut into `parts` equal parts; the rank whose
/// coordinate along mesh axis `axis` is p holds part p of every block, in
/// block order.
struct TensorSplitSpec {
  int64_t dim = -1; ///< -1: not split
  int64_t blocks = 1;
  int64_t parts = 1;
  std::string axis;
  bool enabled() const { return dim >= 0; }
};

/// A param, an optimizer state tensor or a batch input.
struct TensorSpec {
  std::string name;
  Shape shape;
  DType dtype = DType::F32;
  InitSpec init;
  /// For state tensors: the param they belong to.
  std::string param;
  /// For params: whether the optimizer applies weight decay.
  bool weightDecay = true;
  /// For state tensors of a ZeRO artifact: whether this is one rank's slice
  /// (ZeroSpec) of the state of `param`, rather than all of it. For params
  /// of a ZeRO-3 artifact: whether this is one rank's slice of the param.
  bool sharded = false;
  /// For a sharded param: the whole tensor's shape (manifest full_shape),
  /// which checkpoints hold; `shape` is the slice's, [s]. Empty otherwise.
  Shape fullShape;
  /// For a param split by tensor parallelism and its state: this rank's
  /// part of the whole.
  TensorSplitSpec split;
  /// For a param of a pipelined artifact and its state: the stages that
  /// hold it (empty: every rank).
  std::vector<int64_t> pipelineStages;

  int64_t numElements() const { return loom::rt::numElements(shape); }
  size_t byteSize() const { return numElements() * dtypeSize(dtype); }
};

enum class ArgRole { Param, State, Step, Input, Output };
const char *argRoleName(ArgRole role);

struct EntryArg {
  ArgRole role = ArgRole::Param;
  std::string name;
  Shape shape;
  DType dtype = DType::F32;
};

struct EntrySpec {
  std::string name;
  std::string symbol;
  std::vector<EntryArg> args;

  /// The output argument called `name`, or nullptr.
  const EntryArg *findOutput(const std::string &name) const;
};

struct TaskSpec {
  enum class Kind { LM, Classify, None };
  Kind kind = Kind::None;
  int64_t batch = 0;
  /// LM only.
  int64_t seq = 0;
  int64_t vocab = 0;
  /// Rows packed with documents (docs/sequences.md): the inputs "segments"
  /// (each token's document) and "positions" (its place in it) come too.
  bool documents = false;
  /// Documents placed on the ranks by the per-step planner: a rank's rows
  /// are one list of pieces, "segments" numbers the step's documents and
  /// "positions" counts from each document's start (docs/sequences.md).
  bool partitioned = false;
  /// With documents: the longest document attended whole (the rows of the
  /// model's position table, at least seq; 0 means seq).
  int64_t context = 0;
  int64_t contextLength() const { return context > seq ? context : seq; }
  /// Classify only.
  int64_t features = 0;
  int64_t classes = 0;

  /// Work per step for throughput: batch*seq tokens (lm), batch samples
  /// (classify), 1 (none).
  int64_t tokensPerStep() const;
};
const char *taskKindName(TaskSpec::Kind kind);

/// The device mesh the artifact's collectives run over (manifest "mesh"):
/// axis names and sizes. Empty for an artifact compiled for one rank.
struct MeshSpec {
  std::vector<std::string> axes;
  std::vector<int64_t> shape;

  /// Ranks the job must have: the product of the sizes (1 without a mesh).
  int64_t ranks() const;
  /// "dp=2" or "dp=2,tp=4"; "" without a mesh.
  std::string describe() const;
  /// How the ranks are arranged, for the log: "dp=2 x tp=4, each tp group
  /// consecutive ranks" (the mesh is row-major: the last axis of more than
  /// one rank is the one whose groups are neighbours).
  std::string layout() const;
  /// Where rank `rank` of `ranks` reads its batches: its coordinate along
  /// the "dp" axis (the mesh is row-major) and that axis's size. Ranks that
  /// differ only along another axis read the same batches (the two ranks
  /// of a zeroth-order perturbation pair, docs/zo.md). Without a "dp" axis:
  /// (rank, ranks), every rank its own.
  std::pair<int64_t, int64_t> dataPosition(int64_t rank, int64_t ranks) const;
  /// Rank `rank`'s coordinate along `axis` (0 without that axis), and the
  /// rank whose coordinates are `rank`'s but `value` along `axis`.
  int64_t coordinate(int64_t rank, const std::string &axis) const;
  int64_t withCoordinate(int64_t rank, const std::string &axis,
                         int64_t value) const;
  /// The size of `axis` (1 without that axis).
  int64_t axisSize(const std::string &axis) const;
};

/// Pipeline parallelism (manifest "pipeline"): the stages along a mesh
/// axis, each rank running the entries of its stage.
struct PipelineSpec {
  int64_t stages = 1; ///< 1: not pipelined
  int64_t microBatches = 1;
  std::string axis;
  bool enabled() const { return stages > 1; }
};

/// Sharded CO2: the slice of the flattened parameters whose outer state
/// one rank keeps (manifest co2.layout[rank]).
struct CO2Shard {
  /// Its first element, which is also where the rank's shard of the round
  /// buffer starts: rank x shardElements.
  int64_t offset = 0;
  /// How many parameter elements it holds, at most shardElements.
  int64_t elements = 0;
};

/// CO2 (manifest "co2"): every `localSteps` steps the trainer runs an outer
/// step, fed by the mean over ranks of the parameters as they were at the
/// previous one, which the communication thread computed meanwhile
/// (docs/co2.md). Replicated: entry `outer_step` updates every parameter
/// from `co2.mean:<param>` inputs. Sharded: each rank keeps `shardElements`
/// elements of the outer state, a slice of the parameters `params`
/// flattened in that order followed by one loss slot and zero padding, and
/// entry `outer_shard` updates that slice. The outer hyperparameters are
/// compiled into the entry. localSteps 0: not a CO2 artifact.
struct CO2Spec {
  int64_t localSteps = 0;
  bool sharded = false;
  int64_t shardElements = 0;
  std::vector<std::string> params;
  /// Sharded: one slice per rank of the mesh, in rank order, as loomc laid
  /// them out. Parsing checks that they follow each other from element 0
  /// and leave room for the loss slot; the trainer, that they cover the
  /// parameters `params` names.
  std::vector<CO2Shard> layout;

  /// Sharded: the parameter elements the slices hold, all of them.
  int64_t paramElements() const;
  /// Sharded: where the round's mean loss travels, the element after the
  /// last parameter element: its rank and its index in that rank's shard.
  std::pair<int, int64_t> lossSlot() const;
};

/// ZeRO (manifest "zero"): each of `ranks` ranks keeps and updates a
/// slice of every sharded state tensor (TensorSpec::sharded). Stages 1
/// and 2 all-gather the updated params, which stay replicated; stage 2 and
/// 3 reduce-scatter the gradients; stage 3 keeps only a slice of every
/// sharded param too, which the entries gather where they read it.
/// Rank r's slice of a tensor of n elements (a state tensor's: its param's
/// whole n) holds elements [r*s, r*s + s) of its row-major flattening,
/// s = shardElements(n), zeros past n. Checkpoints hold the whole tensors
/// (docs/zero.md). stage 0: not a ZeRO artifact.
struct ZeroSpec {
  int64_t stage = 0;
  int64_t ranks = 0;

  bool enabled() const { return stage > 0; }
  /// The elements of each rank's slice of a tensor of `elements`:
  /// ceil(elements / ranks).
  int64_t shardElements(int64_t elements) const;
};

/// Gradient compression (manifest "compression", loomc --compress): the
/// method the compiled step's compressed all-reduces average each listed
/// gradient with (docs/compression.md). method "": none.
struct CompressionSpec {
  /// One gradient a compressed all-reduce averages (its slot is its index),
  /// seen as a rows x cols matrix (cols: its param's last dimension).
  struct Slot {
    std::string param;
    int64_t rows = 0, cols = 0;
  };
  /// "bf16", "powersgd", "quant" or "topk" (every slot alike, where it
  /// shrinks the gradient) or "lgreco" (chosen per slot at run time).
  std::string method;
  /// PowerSGD's rank (lgreco: the uniform baseline's, whose error is the
  /// budget), quantisation's bits, top-k's density; 0 where unused.
  int64_t rank = 0, bits = 0;
  double density = 0;
  /// Steps of plain fp32 averaging first; lgreco: at least 1, and how often
  /// it re-chooses (0: never again).
  int64_t warmupSteps = 0, resolveEvery = 0;
  /// What lgreco minimises: "time" (modelled on the link below) or "bytes".
  std::string objective = "time";
  /// lgreco's error of a layer: "relative" (|G - C(G)|^2 / |G|^2) or
  /// "absolute" (|G - C(G)|^2).
  std::string errorMeasure = "relative";
  double linkGbps = 1, linkLatencyUs = 50;
  std::vector<Slot> slots;

  bool enabled() const { return !method.empty(); }
};

/// Manifest "cuda", present exactly when the target is cuda.
struct CudaSpec {
  /// The GPU architecture the kernels were compiled for, e.g. "sm_90".
  std::string chip;
  /// The compute capability it names (9 and 0 for "sm_90").
  int major = 0, minor = 0;
};

struct Manifest {
  int64_t formatVersion = 0;
  std::string generator;
  /// The shared object, relative to the artifact directory.
  std::string library;
  /// Its SHA-256 (lower-case hex) as loomc wrote it; "" when not recorded.
  std::string librarySha256;
  /// What the entry points run on (manifest "target"; absent: cpu).
  Target target = Target::CPU;
  CudaSpec cuda;
  DType dtype = DType::F32;
  /// compile_options.precision: "f32" or "bf16" (GEMMs on bf16 operands
  /// inside model.so); informational, the ABI is the same.
  std::string precision = "f32";
  std::string modelKind;
  std::string modelSpec;
  std::string optimizerKind;
  TaskSpec task;
  MeshSpec mesh;
  PipelineSpec pipeline;
  CO2Spec co2;
  ZeroSpec zero;
  CompressionSpec compression;
  std::vector<TensorSpec> params;
  std::vector<TensorSpec> state;
  std::vector<TensorSpec> inputs;
  std::map<std::string, EntrySpec> entries;
  /// Where the manifest was read from, for messages.
  std::string source;

  const TensorSpec *findParam(const std::string &name) const;
  /// The shape of the whole tensor that `spec` (a param or state tensor of
  /// this manifest) is a slice of: a sharded param's full_shape, a sharded
  /// state tensor's param's whole shape, or else its own shape.
  const Shape &wholeShape(const TensorSpec &spec) const;
  /// Job rank `rank`'s index among the ranks ZeRO shards over: its
  /// coordinate along the mesh's "dp" axis (the job's rank where the mesh
  /// is data parallelism alone).
  int64_t zeroRank(int64_t rank) const;
  /// Whether each rank saves its own ZeRO shards (docs/zero.md): where the
  /// job is data parallelism alone. With tensor or pipeline parallelism
  /// too, the slices are gathered over the data-parallel ranks and the
  /// checkpoint holds whole tensors, as a replicated job's does.
  bool zeroSavesShards() const {
    return zero.enabled() && mesh.axes.size() == 1;
  }
  const TensorSpec *findState(const std::string &name) const;
  const TensorSpec *findInput(const std::string &name) const;
  const EntrySpec *findEntry(const std::string &name) const;
};

/// Parses and validates manifest text. `source` names the file in messages.
/// Throws Error("<source>: <json.path>: <problem>").
Manifest parseManifest(const std::string &text, const std::string &source);

/// Reads `<artifactDir>/manifest.json`.
Manifest readManifest(const std::string &artifactDir);

} // namespace loom::rt

#endif // LOOM_RUNTIME_MANIFEST_H
