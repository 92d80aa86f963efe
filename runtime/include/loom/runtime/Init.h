//===- Init.h - Deterministic parameter initialisation ----------*- C++ -*-===//
//
// Initial values are a pure function of (run seed, tensor name, element
// index): the stream key is mix64(seed ^ FNV-1a(name)), so every rank and
// every rerun draws the same values, and renaming or reordering other
// tensors does not change this one.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_INIT_H
#define LOOM_RUNTIME_INIT_H

#include "loom/runtime/DType.h"
#include "loom/runtime/Manifest.h"

#include <cstdint>
#include <string>

namespace loom::rt {

/// Fills `count` elements of type `dtype` at `data` per `init`, drawing from
/// the stream of (seed, name).
void fillInit(void *data, DType dtype, int64_t count, const InitSpec &init,
              uint64_t seed, const std::string &name);

/// The same for a slice of that tensor, of `whole` elements: `count`
/// elements from element `first` of its row-major flattening, each with the
/// value it has in the whole tensor, and zeros past `whole` (a rank's slice
/// of a ZeRO-sharded tensor, Manifest.h: ZeroSpec). So the slices of all
/// ranks are the whole tensor of one rank.
void fillInitSlice(void *data, DType dtype, int64_t count, int64_t first,
                   int64_t whole, const InitSpec &init, uint64_t seed,
                   const std::string &name);

} // namespace loom::rt

#endif // LOOM_RUNTIME_INIT_H
