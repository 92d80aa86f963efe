//===- LoomInterfaces.td - loom op interfaces --------------*- tablegen -*-===//
#ifndef LOOM_INTERFACES_TD
#define LOOM_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Loom_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let cppNamespace = "::mlir::loom";
  let description = [{
    An op that knows its vector-Jacobian product. `--loom-autodiff` walks the
    loss function backwards and asks every op for the gradients of its
    operands given the gradients of its results, so a new op brings its own
    gradient by implementing this interface.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the insertion point of `b`, the gradient of every operand.
        `resultGrads` has one entry per result; a null value means no
        gradient flows into that result (treat it as zero). Fill
        `operandGrads` with one entry per operand (null: no gradient, e.g.
        for integer operands). Each gradient has its operand's type.
      }], "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$b, "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

#endif // LOOM_INTERFACES_TD
