//===- SymbolText.cpp - A symbol's text, its name aside -------------------===//
#include "loom/Support/SymbolText.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/raw_ostream.h"

std::string mlir::loom::textNamed(Operation *symbol, StringRef name) {
  StringAttr own = SymbolTable::getSymbolName(symbol);
  SymbolTable::setSymbolName(symbol, name);
  std::string text;
  llvm::raw_string_ostream os(text);
  // Local scope: printed from the module, an op's values and blocks would
  // be numbered in the module's scope (and printing would cost the whole
  // module each time).
  symbol->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  SymbolTable::setSymbolName(symbol, own);
  return text;
}
