//===- CommOps.td - comm dialect ops -----------------------*- tablegen -*-===//
#ifndef COMM_OPS_TD
#define COMM_OPS_TD

include "dialects/Comm/IR/CommBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Comm_MeshOp : Comm_Op<"mesh", [Symbol]> {
  let summary = "Declares a named grid of ranks.";
  let description = [{
    Ranks are numbered row-major over `shape`; axis `i` is named
    `axes[i]`.

    Example:
    ```mlir
    comm.mesh @world shape = [4] axes = ["dp"]
    ```

    **Constraints:**
    - `shape` is non-empty and every size is positive.
    - `axes` has one distinct, non-empty name per dimension of `shape`.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, DenseI64ArrayAttr:$shape,
                       StrArrayAttr:$axes);
  let assemblyFormat = "$sym_name `shape` `=` $shape `axes` `=` $axes attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of ranks in the groups along `axes`.
    int64_t getGroupSize(::mlir::ArrayAttr axes);
  }];
}

def Comm_GroupRankOp : Comm_Op<"group_rank", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "This rank's index within its group along the given axes.";
  let description = [{
    The position of the running rank in its group (the ranks that differ
    only along `axes`), from 0 to the group size minus one: the index a
    collective's slices are numbered by (`comm.reduce_scatter` gives rank
    `r` slice `r`, `comm.all_gather` puts rank `r`'s operand at `r`). It
    talks to no other rank. ZeRO's sharded optimizer
    (`--loom-shard-state`) uses it to pick the slice this rank updates.

    Example:
    ```mlir
    %r = comm.group_rank @world ["dp"]
    ```

    **Constraints:**
    - `mesh` names a `comm.mesh`; `axes` is non-empty, has no duplicates and
      names axes of that mesh.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs Index:$rank);
  let assemblyFormat = "$mesh $axes attr-dict";
  let extraClassDeclaration = [{
    /// Ranks in the group (1 while the mesh or axes are invalid).
    int64_t getGroupSize();
  }];
}

// Every collective names its mesh and the axes its groups span, and is
// ordered against other collectives (it talks to the other ranks), so it
// carries a write effect on the default resource and is never reordered or
// removed by generic passes.
class Comm_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Comm_Op<mnemonic, !listconcat([
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        MemoryEffects<[MemRead, MemWrite]>], traits)> {
  code commonExtra = [{
    /// Ranks taking part in each group of this collective.
    int64_t getGroupSize();
  }];
}

def Comm_AllReduceOp : Comm_CollectiveOp<"all_reduce"> {
  let summary = "Reduces a tensor across the ranks of each group.";
  let description = [{
    Every rank of the group receives the element-wise `reduction` (sum,
    mean or max) of the operand over the group.

    With `compress_slot` (set by `--loom-compress`) the mean is of the
    ranks' compressed gradients: the runtime averages gradient `slot` of the
    module's `loom.compression` with the method its plan gives that slot at
    the step, keeping the error feedback (docs/compression.md).

    Example:
    ```mlir
    %g = comm.all_reduce %grad over @world ["dp"] mean : tensor<64x32xf32>
    %c = comm.all_reduce %grad over @world ["dp"] mean {compress_slot = 0 : i64} : tensor<64x32xf32>
    ```

    **Constraints:**
    - `mesh` names a `comm.mesh`; `axes` is non-empty, has no duplicates and
      names axes of that mesh.
    - The result type equals the operand type.
    - `mean` needs a float element type.
    - `compress_slot` is not negative and needs `mean` of an f32 tensor.
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, Comm_ReduceKind:$reduction,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$compress_slot);
  let results = (outs Comm_Tensor:$result);
  // The plain (uncompressed) all-reduce most passes create.
  let builders = [OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
      "::llvm::StringRef":$mesh, "::mlir::ArrayAttr":$axes,
      "::mlir::loom::comm::ReduceKind":$reduction), [{
    build($_builder, $_state, result, input, mesh, axes, reduction,
          /*compress_slot=*/nullptr);
  }]>];
  let assemblyFormat = [{
    $input `over` $mesh $axes $reduction attr-dict `:`
    custom<SameType>(type($input), type($result))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = commonExtra;
}

def Comm_ReduceScatterOp : Comm_CollectiveOp<"reduce_scatter"> {
  let summary = "Reduces across each group, leaving each rank one slice.";
  let description = [{
    The reduction over the group is split into `size` equal slices along
    `dim`; rank `r` of the group receives slice `r`.

    Example:
    ```mlir
    %s = comm.reduce_scatter %g over @world ["dp"] sum dim = 0 : tensor<64x32xf32> -> tensor<16x32xf32>
    ```

    **Constraints:**
    - `mesh` names a `comm.mesh`; `axes` is non-empty, has no duplicates and
      names axes of that mesh.
    - `dim` is a dimension of the operand whose size the group size divides.
    - The result has the operand's element type and shape, with `dim`
      divided by the group size.
    - `mean` needs a float element type.
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, Comm_ReduceKind:$reduction,
                       I64Attr:$dim);
  let results = (outs Comm_Tensor:$result);
  let assemblyFormat = [{
    $input `over` $mesh $axes $reduction `dim` `=` $dim attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = commonExtra;
}

def Comm_AllGatherOp : Comm_CollectiveOp<"all_gather"> {
  let summary = "Concatenates each rank's tensor across its group.";
  let description = [{
    Every rank receives the operands of all ranks of its group concatenated
    along `dim`, in group-rank order.

    Example:
    ```mlir
    %p = comm.all_gather %shard over @world ["dp"] dim = 0 : tensor<16x32xf32> -> tensor<64x32xf32>
    ```

    **Constraints:**
    - `mesh` names a `comm.mesh`; `axes` is non-empty, has no duplicates and
      names axes of that mesh.
    - `dim` is a dimension of the operand.
    - The result has the operand's element type and shape, with `dim`
      multiplied by the group size.
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Comm_Tensor:$result);
  let assemblyFormat = [{
    $input `over` $mesh $axes `dim` `=` $dim attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = commonExtra;
}

def Comm_BroadcastOp : Comm_CollectiveOp<"broadcast"> {
  let summary = "Copies the root rank's tensor to every rank of its group.";
  let description = [{
    Example:
    ```mlir
    %w = comm.broadcast %w0 over @world ["dp"] root = 0 : tensor<64x32xf32>
    ```

    **Constraints:**
    - `mesh` names a `comm.mesh`; `axes` is non-empty, has no duplicates and
      names axes of that mesh.
    - `root` is a rank of the group: `0 <= root < group size`.
    - The result type equals the operand type.
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$root);
  let results = (outs Comm_Tensor:$result);
  let assemblyFormat = [{
    $input `over` $mesh $axes `root` `=` $root attr-dict `:`
    custom<SameType>(type($input), type($result))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = commonExtra;
}

//===----------------------------------------------------------------------===//
// Tensor parallelism: a local op whose gradient is a collective
//===----------------------------------------------------------------------===//

def Comm_FanOutOp : Comm_Op<"fan_out", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A value every rank of the group holds, used by each for "
                "its own part of the work.";
  let description = [{
    The identity in the forward pass. Every rank of the group holds the
    same operand and computes its own part of what follows (its heads, its
    columns of a weight), so the operand's gradient is the sum over the
    group of the ranks' gradients: `--loom-autodiff` gives it a
    `comm.all_reduce ... sum` (Megatron-LM's "copy to the tensor-parallel
    region"). Its counterpart is a `comm.all_reduce ... sum` in the forward
    pass, whose result is again the same on every rank, and whose gradient
    passes through unchanged. After autodiff it is its operand
    (`--loom-lower-to-linalg`).

    Example:
    ```mlir
    %y = comm.fan_out %x over @world ["tp"] : tensor<4x64x16xf32>
    ```

    **Constraints:**
    - `mesh` names a `comm.mesh`; `axes` is non-empty, has no duplicates and
      names axes of that mesh.
    - The result type equals the operand type.
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes);
  let results = (outs Comm_Tensor:$result);
  let assemblyFormat = [{
    $input `over` $mesh $axes attr-dict `:`
    custom<SameType>(type($input), type($result))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Ranks in the group (1 while the mesh or axes are invalid).
    int64_t getGroupSize();
  }];
}

//===----------------------------------------------------------------------===//
// Pipeline parallelism: point-to-point transfers between neighbouring ranks
//===----------------------------------------------------------------------===//

def Comm_SendOp : Comm_Op<"send", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Sends a tensor to the rank `peer` places after this one "
                "in its group.";
  let description = [{
    The rank at position `p` of its group (the ranks that differ only along
    `axes`) sends the operand to the rank at position `p + peer`, whose
    matching `comm.recv` (with `peer` negated) receives it. Between the same
    two ranks, sends are received in the order they were sent. The runtime
    copies the operand before returning, so neither rank waits for the
    other here: only a `comm.recv` waits (`--loom-pipeline-parallel`'s
    schedules rely on this to be free of deadlocks). `--loom-autodiff`
    gives the operand the gradient the peer sends back: a `comm.recv` from
    `peer`.

    Example:
    ```mlir
    comm.send %act over @world ["pp"] peer = 1 : tensor<2x64x32xf32>
    ```

    **Constraints:**
    - `mesh` names a `comm.mesh`; `axes` is non-empty, has no duplicates and
      names axes of that mesh.
    - `peer` is not 0 and names a rank of a group: `|peer| < group size`.
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$peer);
  let assemblyFormat = [{
    $input `over` $mesh $axes `peer` `=` $peer attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Ranks in the group (1 while the mesh or axes are invalid).
    int64_t getGroupSize();
  }];
}

def Comm_RecvOp : Comm_Op<"recv", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Receives the tensor the rank `peer` places away sent.";
  let description = [{
    The next tensor the rank at position `p + peer` of this rank's group
    sent it with `comm.send` (whose `peer` is this one's negated); the
    result type is the sent tensor's. Waits until it has arrived. Its
    gradient (`--loom-autodiff`) is sent back to that rank: a `comm.send`
    to `peer`.

    Example:
    ```mlir
    %act = comm.recv over @world ["pp"] peer = -1 : tensor<2x64x32xf32>
    ```

    **Constraints:**
    - `mesh` names a `comm.mesh`; `axes` is non-empty, has no duplicates and
      names axes of that mesh.
    - `peer` is not 0 and names a rank of a group: `|peer| < group size`.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes,
                       I64Attr:$peer);
  let results = (outs Comm_Tensor:$result);
  let assemblyFormat = [{
    `over` $mesh $axes `peer` `=` $peer attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Ranks in the group (1 while the mesh or axes are invalid).
    int64_t getGroupSize();
  }];
}

def Comm_ShardOp : Comm_Op<"shard", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "This rank's part of a value every rank of the group holds.";
  let description = [{
    The operand, which every rank of the group holds alike, cut into as many
    equal parts along `dim` as the group has ranks: the rank at position p
    gets part p (sequence parallelism, `--loom-sequence-parallel`: a rank
    keeps its share of the tokens). Moves no data. Its gradient
    (`--loom-autodiff`) is the `comm.all_gather` of the ranks' part
    gradients along `dim`.

    Example:
    ```mlir
    %mine = comm.shard %x over @world ["tp"] dim = 0 : tensor<256x64xf32> -> tensor<128x64xf32>
    ```

    **Constraints:**
    - `mesh` names a `comm.mesh`; `axes` is non-empty, has no duplicates and
      names axes of that mesh.
    - `dim` is a dimension of the operand, divisible by the group size.
    - The result has the operand's element type and shape, with `dim`
      divided by the group size.
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Comm_Tensor:$result);
  let assemblyFormat = [{
    $input `over` $mesh $axes `dim` `=` $dim attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Ranks in the group (1 while the mesh or axes are invalid).
    int64_t getGroupSize();
  }];
}

def Comm_UnshardOp : Comm_CollectiveOp<"unshard"> {
  let summary = "The whole a group's parts make, for work every rank then "
                "does alike.";
  let description = [{
    The ranks' operands concatenated along `dim` in group-rank order, as
    `comm.all_gather`, for computations every rank of the group then does
    alike (sequence parallelism's exit to the layers that are not split:
    the output head and the loss). Its gradient (`--loom-autodiff`) is this
    rank's part of the result's gradient (`comm.shard`): every rank holds
    the same gradient of the whole, where `comm.all_gather`'s is the sum of
    the ranks' different gradients (a split layer's). Lowered to
    `comm.all_gather`.

    Example:
    ```mlir
    %x = comm.unshard %mine over @world ["tp"] dim = 0 : tensor<128x64xf32> -> tensor<256x64xf32>
    ```

    **Constraints:**
    - `mesh` names a `comm.mesh`; `axes` is non-empty, has no duplicates and
      names axes of that mesh.
    - `dim` is a dimension of the operand.
    - The result has the operand's element type and shape, with `dim`
      multiplied by the group size.
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs Comm_Tensor:$result);
  let assemblyFormat = [{
    $input `over` $mesh $axes `dim` `=` $dim attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = commonExtra;
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

// A *_start op launches a collective and returns a token plus the tensor in
// flight; the only use of both is the matching comm.wait, which returns the
// collective's result. Work placed between the two overlaps with it.
class Comm_StartOp<string mnemonic, string sync>
    : Comm_CollectiveOp<mnemonic> {
  let results = (outs Comm_TokenType:$token, Comm_Tensor:$inflight);
  let summary = "Starts `comm." # sync # "` without waiting for it.";
  let hasVerifier = 1;
  let extraClassDeclaration = commonExtra # [{
    /// The comm.wait that completes this collective.
    ::mlir::Operation *getWait();
  }];
}

def Comm_AllReduceStartOp : Comm_StartOp<"all_reduce_start", "all_reduce"> {
  let description = [{
    Asynchronous `comm.all_reduce`: the reduction runs while the ops up to
    the matching `comm.wait` execute.

    Example:
    ```mlir
    %tok, %f = comm.all_reduce_start %g over @world ["dp"] mean : tensor<64xf32>
    %r = comm.wait %tok, %f : tensor<64xf32>
    ```

    **Constraints:**
    - As `comm.all_reduce` (mesh, axes, mean on floats, `compress_slot`);
      `inflight` has the operand's type.
    - The token and the in-flight tensor are used exactly once, both by the
      same `comm.wait` (every token is waited once; nothing reads the result
      before its wait).
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, Comm_ReduceKind:$reduction,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$compress_slot);
  let assemblyFormat = [{
    $input `over` $mesh $axes $reduction attr-dict `:`
    custom<SameType>(type($input), type($inflight))
  }];
}

def Comm_ReduceScatterStartOp
    : Comm_StartOp<"reduce_scatter_start", "reduce_scatter"> {
  let description = [{
    Asynchronous `comm.reduce_scatter`.

    Example:
    ```mlir
    %tok, %f = comm.reduce_scatter_start %g over @world ["dp"] sum dim = 0 : tensor<64x32xf32> -> tensor<16x32xf32>
    %s = comm.wait %tok, %f : tensor<16x32xf32>
    ```

    **Constraints:**
    - As `comm.reduce_scatter`, with `inflight` in the role of its result.
    - The token and the in-flight tensor are used exactly once, both by the
      same `comm.wait`.
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, Comm_ReduceKind:$reduction,
                       I64Attr:$dim);
  let assemblyFormat = [{
    $input `over` $mesh $axes $reduction `dim` `=` $dim attr-dict `:`
    type($input) `->` type($inflight)
  }];
}

def Comm_AllGatherStartOp : Comm_StartOp<"all_gather_start", "all_gather"> {
  let description = [{
    Asynchronous `comm.all_gather`.

    Example:
    ```mlir
    %tok, %f = comm.all_gather_start %s over @world ["dp"] dim = 0 : tensor<16x32xf32> -> tensor<64x32xf32>
    %p = comm.wait %tok, %f : tensor<64x32xf32>
    ```

    **Constraints:**
    - As `comm.all_gather`, with `inflight` in the role of its result.
    - The token and the in-flight tensor are used exactly once, both by the
      same `comm.wait`.
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let assemblyFormat = [{
    $input `over` $mesh $axes `dim` `=` $dim attr-dict `:` type($input) `->`
    type($inflight)
  }];
}

def Comm_BroadcastStartOp : Comm_StartOp<"broadcast_start", "broadcast"> {
  let description = [{
    Asynchronous `comm.broadcast`.

    Example:
    ```mlir
    %tok, %f = comm.broadcast_start %w over @world ["dp"] root = 0 : tensor<64xf32>
    %r = comm.wait %tok, %f : tensor<64xf32>
    ```

    **Constraints:**
    - As `comm.broadcast`, with `inflight` in the role of its result.
    - The token and the in-flight tensor are used exactly once, both by the
      same `comm.wait`.
  }];
  let arguments = (ins Comm_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$root);
  let assemblyFormat = [{
    $input `over` $mesh $axes `root` `=` $root attr-dict `:`
    custom<SameType>(type($input), type($inflight))
  }];
}

def Comm_TransferStartOp : Comm_Op<"transfer_start", [
    MemoryEffects<[MemRead, MemWrite]>, AllTypesMatch<["source", "dest", "inflight"]>]> {
  let summary = "Starts a copy between host and device memory (offloading).";
  let description = [{
    Copies `source` into `dest` over the link between the host's memory and
    the compute device's (`direction`: `upload` to the device, `offload`
    back to the host); the result, `dest` with the copy in flight, is
    readable after the matching `comm.wait`. Zeroth-order training with
    offloaded parameters (`--zo=mezo:offload=1`, docs/zo.md) uploads each
    parameter once a step into a fresh device buffer (`dest` a
    `tensor.empty`) and writes the updated value back into the
    parameter's own buffer (`dest` the parameter's value). Both directions
    are queues of their own: transfers in one direction complete in issue
    order, and the two directions overlap each other and the compute
    between a start and its wait. On the CPU target the data is copied when
    the transfer starts and the wait blocks until the transfer would have
    arrived over a link of the bandwidth `loom-run --offload-bandwidth`
    models (docs/zo.md).

    Example:
    ```mlir
    %e = tensor.empty() : tensor<64x32xf32>
    %tok, %f = comm.transfer_start %w into %e "upload" : tensor<64x32xf32>
    %d = comm.wait %tok, %f : tensor<64x32xf32>
    ```

    **Constraints:**
    - `source`, `dest` and the in-flight tensor have one type.
    - `direction` is `upload` or `offload`.
    - The token and the in-flight tensor are used exactly once, both by the
      same `comm.wait`.
  }];
  let arguments = (ins Comm_Tensor:$source, Comm_Tensor:$dest,
                       StrAttr:$direction);
  let results = (outs Comm_TokenType:$token, Comm_Tensor:$inflight);
  let assemblyFormat = [{
    $source `into` $dest $direction attr-dict `:` type($source)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The comm.wait that completes this transfer.
    ::mlir::Operation *getWait();
  }];
}

def Comm_WaitOp : Comm_Op<"wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Waits for an asynchronous collective and returns its result.";
  let description = [{
    Blocks until the collective that produced `token` has completed on this
    rank; only then is its result (the in-flight tensor) readable.

    Example:
    ```mlir
    %r = comm.wait %tok, %f : tensor<64xf32>
    ```

    **Constraints:**
    - `token` and `inflight` are the two results of one `*_start` op.
    - The result type equals the in-flight type.
  }];
  let arguments = (ins Comm_TokenType:$token, Comm_Tensor:$inflight);
  let results = (outs Comm_Tensor:$result);
  let assemblyFormat = [{
    $token `,` $inflight attr-dict `:`
    custom<SameType>(type($inflight), type($result))
  }];
  let hasVerifier = 1;
}

#endif // COMM_OPS_TD
