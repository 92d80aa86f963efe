//===- CheckpointRead.h - Checks and copies of a checkpoint load -*- C++
//-*-===//
//
// Internal to the runtime: what loading a replicated or CO2 checkpoint
// (CheckpointLoad.cpp) and a ZeRO one (ZeroLoad.cpp) share.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CHECKPOINT_CHECKPOINTREAD_H
#define LOOM_RUNTIME_SRC_CHECKPOINT_CHECKPOINTREAD_H

#include "loom/runtime/Artifact.h"
#include "loom/runtime/SafeTensors.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace loom::rt {

/// Fails unless trainer.json's `files` record file `name` of checkpoint
/// `dir` and the file is there with the recorded size; returns the
/// recorded sha256. `trainerPath` names trainer.json in messages.
std::string checkFileSize(const std::string &dir, const nlohmann::json &files,
                          const std::string &name,
                          const std::string &trainerPath);

/// checkFileSize, then the file's sha256 against the recorded one.
void verifyFile(const std::string &dir, const nlohmann::json &files,
                const std::string &name, const std::string &trainerPath);

/// An integer field of `object` in [min, max] (`maxText` spells max in
/// the message), naming `source` and the field otherwise.
int64_t integerField(const nlohmann::json &object, const char *key,
                     const std::string &source, int64_t min, int64_t max,
                     const char *maxText);

/// Copies `count` elements of safetensors tensor `view` from its element
/// `from` into `tensor` from its element `at`, converting between F32 and
/// F64 (other dtypes must match; `source` names the file otherwise). The
/// ranges have been checked by the caller.
void copyElements(Tensor &tensor, int64_t at, const SafeTensorView &view,
                  int64_t from, int64_t count, const std::string &source);

/// Looks up `tensor` in `file`, whose tensor of that name must have
/// `shape` (the tensor's own, the whole of a ZeRO slice's, or a shard's),
/// naming `source` and the first mismatch.
const SafeTensorView &matching(const SafeTensorsFile &file,
                               const Tensor &tensor, const Shape &shape,
                               const std::string &source);

/// Fails unless every tensor of `file` is one of `artifact`'s of `role`
/// (`what` says whose: "" for the params, "'s optimizer").
void checkKnownTensors(const SafeTensorsFile &file, Artifact &artifact,
                       ArgRole role, const std::string &source,
                       const char *what);

/// Throws Error naming `tensor` and `source` if a value of it is NaN or
/// infinite: weights like that make the first loss NaN, which was then
/// blamed on the learning rate. `slice`: where `tensor` lies in the
/// checkpoint's tensor, whose element the message names.
void checkFinite(const Tensor &tensor, const std::string &source,
                 const SliceOf &slice);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_CHECKPOINT_CHECKPOINTREAD_H
