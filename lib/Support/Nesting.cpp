//===- Nesting.cpp - How deep a model may nest ----------------------------===//
#include "loom/Support/Nesting.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

LogicalResult mlir::loom::checkTextNesting(llvm::SourceMgr &sourceMgr,
                                           MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  llvm::StringRef text = buffer->getBuffer();
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '/' && i + 1 < e && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        break;
    } else if (c == '"') {
      // Up to the closing quote; a backslash escapes the next character.
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '-' && i + 1 < e && text[i + 1] == '>') {
      ++i; // an arrow, not a closing '>'
    } else if (c == '{' || c == '(' || c == '[' || c == '<') {
      if (++depth > kMaxNesting) {
        auto [line, column] = sourceMgr.getLineAndColumn(
            llvm::SMLoc::getFromPointer(text.data() + i));
        return emitError(FileLineColLoc::get(
                   context, buffer->getBufferIdentifier(), line, column))
               << "the input nests deeper than " << kMaxNesting
               << " levels (brackets, regions, types); Loom's tools read no "
                  "deeper nesting";
      }
    } else if ((c == '}' || c == ')' || c == ']' || c == '>') && depth > 0) {
      --depth;
    }
  }
  return success();
}
