//===- Help.h - loom-run --help ---------------------------------*- C++ -*-===//
#ifndef LOOM_TOOLS_LOOM_RUN_HELP_H
#define LOOM_TOOLS_LOOM_RUN_HELP_H

namespace loom::run {

/// What `loom-run --help` prints.
extern const char *const kHelp;

} // namespace loom::run

#endif // LOOM_TOOLS_LOOM_RUN_HELP_H
