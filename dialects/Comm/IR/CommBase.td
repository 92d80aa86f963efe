//===- CommBase.td - The comm dialect ----------------------*- tablegen -*-===//
//
// Communication between ranks: device meshes and collectives. Synchronous
// collectives have value semantics on tensors; asynchronous forms (start /
// wait with a token) come with the overlap scheduler.
//
//===----------------------------------------------------------------------===//
#ifndef COMM_BASE_TD
#define COMM_BASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def Comm_Dialect : Dialect {
  let name = "comm";
  let cppNamespace = "::mlir::loom::comm";
  let summary = "Device meshes and collectives between ranks.";
  let useDefaultTypePrinterParser = 1;
  let description = [{
    A `comm.mesh` symbol names a grid of ranks with named axes; collectives
    run over the ranks that differ only along the given axes. Every
    collective must be issued in the same order on every rank of its group.
  }];
}

class Comm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Comm_Dialect, mnemonic, traits>;

def Comm_Tensor : RankedTensorOf<[F32, F64, I32, I64], [HasStaticShapePred],
                                 "statically shaped tensor">;

def Comm_TokenType : TypeDef<Comm_Dialect, "Token"> {
  let mnemonic = "token";
  let summary = "A collective in flight, produced by a *_start op.";
  let description = [{
    Names one asynchronous collective between its `*_start` and its
    `comm.wait`. Each token is waited exactly once.
  }];
}

def Comm_ReduceKind : I32EnumAttr<"ReduceKind", "reduction of a collective", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>]> {
  let cppNamespace = "::mlir::loom::comm";
}

#endif // COMM_BASE_TD
