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

def Loom_OptimizerOpInterface : OpInterface<"OptimizerOpInterface"> {
  let cppNamespace = "::mlir::loom";
  let description = [{
    An op that updates a parameter (or a value standing for parameters) in
    place together with state tensors of its own, in one fused elementwise
    kernel. `--loom-lower-entry-points` gives every state tensor a buffer of
    the entry's calling convention (role `state`, named
    `<getStatePrefix()>.<suffix>`) and asks the op to build its update;
    `--loom-co2` finds the parameters a step trains by it. So a new optimizer
    is one op implementing this interface: no pass names it, but
    `--loom-add-optimizer`, which chooses it.
  }];
  let methods = [
    InterfaceMethod<[{
        The `loom.param` the op updates in place; null when the op updates
        no parameter but a value, its one result (the new value).
      }], "::mlir::FlatSymbolRefAttr", "getUpdatedParam">,
    InterfaceMethod<[{
        What the names of the state tensors start with (the parameter's
        name, for an op that updates one).
      }], "::llvm::StringRef", "getStatePrefix">,
    InterfaceMethod<[{
        The suffixes of the state tensors' names, in the order `buildUpdate`
        takes and returns them (none: the op keeps no state).
      }], "::llvm::SmallVector<::llvm::StringRef>", "getStateSuffixes">,
    InterfaceMethod<[{
        The type of every state tensor: that of the updated value.
      }], "::mlir::RankedTensorType", "getStateType">,
    InterfaceMethod<[{
        Builds the update at the insertion point of `b`: `param` is the
        current value of the updated parameter (null when there is none),
        `state` the current state tensors in `getStateSuffixes()` order.
        Returns the new value (of the parameter, or of the op's result),
        then the new state tensors in the same order.
      }], "::llvm::SmallVector<::mlir::Value>", "buildUpdate",
      (ins "::mlir::OpBuilder &":$b, "::mlir::Value":$param,
           "::llvm::ArrayRef<::mlir::Value>":$state)>
  ];
}

#endif // LOOM_INTERFACES_TD
