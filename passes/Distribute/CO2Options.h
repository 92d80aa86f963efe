//===- CO2Options.h - CO2's options as a struct -----------------*- C++ -*-===//
//
// One field per line of CO2Options.def, with its default: what --loom-co2
// is built from (createCO2Pass), filled once by loomc from --co2 or by
// loom-opt from the pass's or the train pipeline's options.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_DISTRIBUTE_CO2OPTIONS_H
#define LOOM_PASSES_DISTRIBUTE_CO2OPTIONS_H

#include <cstdint>

namespace mlir::loom {

struct CO2Options {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) TYPE NAME = DEFAULT;
#include "passes/Distribute/CO2Options.def"
};

} // namespace mlir::loom

#endif // LOOM_PASSES_DISTRIBUTE_CO2OPTIONS_H
