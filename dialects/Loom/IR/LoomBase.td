//===- LoomBase.td - The loom dialect ----------------------*- tablegen -*-===//
//
// The training-graph dialect: parameters, neural-network ops on tensors and
// optimizer updates. Distribution lives in the `comm` dialect.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BASE_TD
#define LOOM_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Loom_Dialect : Dialect {
  let name = "loom";
  let cppNamespace = "::mlir::loom";
  let summary = "Tensor-level training graphs: parameters, NN ops, optimizers.";
  let description = [{
    A module in the `loom` dialect describes one training problem:
    `loom.param` symbols declare the trainable tensors, and `func.func @loss`
    computes a scalar loss from a batch. Tensors have static dimensions of
    at least 1 and at most 2^40 elements. Every differentiable op implements
    `VJPOpInterface`, which `--loom-autodiff` uses to build gradients.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
  let useDefaultAttributePrinterParser = 1;
  // loom.co2 and loom.machine on a module must be the typed attributes.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Loom_Op<string mnemonic, list<Trait> traits = []>
    : Op<Loom_Dialect, mnemonic, traits>;

// Loom computes on tensors with static dimensions >= 1 and at most 2^40
// elements (isSupportedShape): a zero dimension would make gradients and
// means divide by zero, and the cap keeps every size computation in int64.
def Loom_SupportedShapePred : CPred<
    "::mlir::loom::isSupportedShape("
    "::llvm::cast<::mlir::ShapedType>($_self).getShape())">;
def Loom_FloatTensor : RankedTensorOf<[F32, F64],
                                      [HasStaticShapePred, Loom_SupportedShapePred],
                                      "non-empty statically shaped float tensor">;
def Loom_IndexTensor : RankedTensorOf<[I32, I64],
                                      [HasStaticShapePred, Loom_SupportedShapePred],
                                      "non-empty statically shaped integer tensor">;
def Loom_ScalarFloatTensor : 0DTensorOf<[F32, F64]>;
def Loom_StepTensor : 0DTensorOf<[I64]>;

def Loom_InitKind : I32EnumAttr<"InitKind", "parameter initialiser", [
    I32EnumAttrCase<"zeros", 0>, I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"normal", 2>, I32EnumAttrCase<"uniform", 3>]> {
  let cppNamespace = "::mlir::loom";
}

#endif // LOOM_BASE_TD
