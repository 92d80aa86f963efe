//===- abi.h - The artifact/runtime contract -----------------*- C++ -*-===//
//
// The calling contract between the compiler (which emits code against it)
// and the runtime (which implements the runtime side and calls the entry
// points); the other files they share are ManifestSchema.def/.h, the keys of
// manifest.json. It is plain C so that the compiler can describe it in MLIR
// without including C++ runtime headers, and so the runtime needs no LLVM.
//
// An artifact is a directory holding `manifest.json` and a shared object.
//
// Entry points. For every entry `e` of `manifest.json["entries"]` the shared
// object exports
//
//     void <e.symbol>(void **args);
//
// where `args[i]` points at the first element of a dense, row-major,
// 64-byte-aligned host buffer described by `e.args[i]` (role, name, shape,
// dtype). Roles:
//   "param"  a trainable parameter (read; written by train_step),
//   "state"  optimizer state of a parameter (read and written),
//   "step"   an int64 scalar: the 1-based index of the step being taken,
//   "input"  a batch input (read only),
//   "output" a result the entry writes (loss, gradients, lr, grad norm).
// Buffers never alias each other.
//
// Cuda artifacts (manifest "target": "cuda"): every `args[i]` is instead a
// device pointer (a CUdeviceptr cast to void *, 256-byte aligned, dense,
// row-major) on the GPU the runtime opened for this rank, the step scalar
// included. An entry enqueues its work on the runtime's compute stream (the
// stream mgpuStreamCreate returns) and may return before it has finished;
// the runtime synchronises that stream before the host reads any result.
//
// Runtime services. The artifact leaves these symbols undefined; the process
// that loads it (loom-run links libLoomRuntime.so) defines them. For a cuda
// artifact the runtime first loads libLoomCuda.so globally, which defines
// the GPU services below and the mgpu* functions that MLIR's GPU lowering
// calls (module load, kernel launch, streams, events, device memory; see
// runtime/src/cuda/Mgpu.cpp and docs/gpu.md). The loom_rt_* collectives
// then take device buffers.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_ABI_H
#define LOOM_RUNTIME_ABI_H

#include <stddef.h>
#include <stdint.h>

/// Bumped on any incompatible change of the manifest or the calling
/// convention; the runtime refuses artifacts with another version.
#define LOOM_ABI_VERSION 1

/// The most ranks a job may have: the compiler refuses a larger --dp, the
/// runtime a larger mesh, checkpoint or flight record. Far beyond any
/// cluster, and it keeps per-rank products and allocations in bounds.
#define LOOM_MAX_RANKS (INT64_C(1) << 20)

#ifdef __cplusplus
extern "C" {
#endif

/// Every entry point has this type.
typedef void (*loom_entry_fn)(void **args);

/// Scratch memory for intermediate tensors. Called by compiled code for every
/// temporary buffer; the runtime serves them from a size-keyed cache so that
/// the steady state of training performs no heap allocation.
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *ptr);

/// `arena + offset`: the address of a temporary that --loom-plan-buffers
/// placed at `offset` of the step's arena. A call, not pointer arithmetic in
/// compiled code, so that LLVM sees each temporary as a pointer of its own
/// origin and vectorizes loops over several of them (with run-time overlap
/// checks), as it does for separately allocated buffers.
void *loom_rt_arena_slice(void *arena, int64_t offset);

/// Strided batched GEMM on row-major operands:
///   C[b] = op(A[b]) * op(B[b]) + beta * C[b]   for b in [0, batch)
/// op(X) is X or X^T (trans != 0). op(A) is MxK, op(B) is KxN, C is MxN.
/// `ld*` are leading dimensions (row strides) and `stride*` the distance
/// between consecutive batch matrices, in elements.
void loom_rt_gemm_f32(int64_t batch, int32_t transA, int32_t transB, int64_t M,
                      int64_t N, int64_t K, const float *A, int64_t lda,
                      int64_t strideA, const float *B, int64_t ldb,
                      int64_t strideB, float beta, float *C, int64_t ldc,
                      int64_t strideC);
void loom_rt_gemm_f64(int64_t batch, int32_t transA, int32_t transB, int64_t M,
                      int64_t N, int64_t K, const double *A, int64_t lda,
                      int64_t strideA, const double *B, int64_t ldb,
                      int64_t strideB, double beta, double *C, int64_t ldc,
                      int64_t strideC);
/// The GEMM of mixed precision (loomc --precision=bf16): A and B are bf16
/// (the raw bits, uint16_t), C and beta f32; products and sums are f32.
/// Debian's OpenBLAS has no sbgemm, so the CPU version widens A and B to f32
/// (exactly) and calls sgemm: the same result up to summation order.
void loom_rt_gemm_bf16(int64_t batch, int32_t transA, int32_t transB, int64_t M,
                       int64_t N, int64_t K, const uint16_t *A, int64_t lda,
                       int64_t strideA, const uint16_t *B, int64_t ldb,
                       int64_t strideB, float beta, float *C, int64_t ldc,
                       int64_t strideC);

/// Document attention (loom.document_attention, CPU): for each of `heads`
/// heads, query i (of nq) attends to key j (of nk) when kdoc[j] == qdoc[i]
/// and kpos[j] <= qpos[i]: out = softmax(scale Q K^T, masked) V. Q and out
/// are [heads, nq, dh], K and V [heads, nk, dh], row-major; `dtype` is
/// LOOM_F32 or LOOM_F64 for all of them. Each document's queries meet only
/// its keys: the work is the sum over documents of their queries x keys.
/// A query that sees no key gets zeros.
void loom_rt_document_attention(int32_t dtype, int64_t heads, int64_t nq,
                                int64_t nk, int64_t dh, double scale,
                                const void *q, const void *k, const void *v,
                                const int32_t *qdoc, const int32_t *qpos,
                                const int32_t *kdoc, const int32_t *kpos,
                                void *out);
/// Its gradients given dout (the probabilities recomputed): dq, dk, dv of
/// the shapes of q, k, v, overwritten.
void loom_rt_document_attention_grad(int32_t dtype, int64_t heads, int64_t nq,
                                     int64_t nk, int64_t dh, double scale,
                                     const void *q, const void *k,
                                     const void *v, const void *dout,
                                     const int32_t *qdoc, const int32_t *qpos,
                                     const int32_t *kdoc, const int32_t *kpos,
                                     void *dq, void *dk, void *dv);

/// loom_rt_gemm_f32/f64 for cuda artifacts: the same arguments and row-major
/// semantics on device pointers, enqueued on the compute stream (cuBLAS;
/// FP32 GEMMs compute in full FP32, not TF32).
void loom_rt_gpu_gemm_f32(int64_t batch, int32_t transA, int32_t transB,
                          int64_t M, int64_t N, int64_t K, const float *A,
                          int64_t lda, int64_t strideA, const float *B,
                          int64_t ldb, int64_t strideB, float beta, float *C,
                          int64_t ldc, int64_t strideC);
void loom_rt_gpu_gemm_f64(int64_t batch, int32_t transA, int32_t transB,
                          int64_t M, int64_t N, int64_t K, const double *A,
                          int64_t lda, int64_t strideA, const double *B,
                          int64_t ldb, int64_t strideB, double beta, double *C,
                          int64_t ldc, int64_t strideC);
/// loom_rt_gemm_bf16 for cuda artifacts: cublasGemmStridedBatchedEx on bf16
/// tensor cores with CUBLAS_COMPUTE_32F.
void loom_rt_gpu_gemm_bf16(int64_t batch, int32_t transA, int32_t transB,
                           int64_t M, int64_t N, int64_t K, const uint16_t *A,
                           int64_t lda, int64_t strideA, const uint16_t *B,
                           int64_t ldb, int64_t strideB, float beta, float *C,
                           int64_t ldc, int64_t strideC);

/// Collectives over the ranks of the running job (MPI on CPU, NCCL on GPU),
/// issued by compiled code in the same order on every rank. `group` names the
/// rank group: 0 is every rank (the "dp" axis of a one-axis mesh); g > 0 the
/// ranks that differ from this one only along the mesh axes of g's bits
/// (bit i: the manifest mesh's axis i; host collectives only for now).
/// `dtype` is a loom_dtype, `op` a loom_reduce_op. Buffers are dense and
/// contiguous.
enum loom_dtype { LOOM_F32 = 0, LOOM_F64 = 1, LOOM_I32 = 2, LOOM_I64 = 3 };
enum loom_reduce_op { LOOM_SUM = 0, LOOM_MEAN = 1, LOOM_MAX = 2 };

/// This rank's index in `group` (0 to the group size - 1): the slice
/// reduce_scatter leaves it and where all_gather puts its operand.
int64_t loom_rt_group_rank(int64_t group);
/// In place: buf = reduce over ranks of buf (count elements).
void loom_rt_all_reduce(int64_t group, void *buf, int64_t count, int32_t dtype,
                        int32_t op);
/// recv (count elements) = this rank's slice of reduce over ranks of send
/// (count * ranks elements; rank r gets slice r).
void loom_rt_reduce_scatter(int64_t group, const void *send, void *recv,
                            int64_t count, int32_t dtype, int32_t op);
/// recv (count * ranks elements) = concatenation over ranks of send (count).
void loom_rt_all_gather(int64_t group, const void *send, void *recv,
                        int64_t count, int32_t dtype);
/// In place: buf = root's buf.
void loom_rt_broadcast(int64_t group, void *buf, int64_t count, int32_t dtype,
                       int32_t root);

/// Pipeline transfers (comm.send / comm.recv): to and from the rank at
/// position `own + peer` of `group`. A send copies buf and returns without
/// waiting for the receiver; a receive blocks until the next tensor that
/// rank sent here has arrived in buf. Host buffers only for now.
void loom_rt_send(int64_t group, const void *buf, int64_t count, int32_t dtype,
                  int32_t peer);
void loom_rt_recv(int64_t group, void *buf, int64_t count, int32_t dtype,
                  int32_t peer);

/// Asynchronous collectives (the overlap scheduler's start/wait pairs). A
/// start enqueues the collective in issue order and returns at once with a
/// handle; the runtime progresses it while compute runs (a progress thread
/// on CPU) and `loom_rt_wait` blocks until that one collective is done. The
/// buffer belongs to the runtime between the two calls. For cuda artifacts
/// (NCCL) nothing blocks the host: a collective runs on a communication
/// stream after the compute work issued before its call, and the compute
/// work issued after `loom_rt_wait` (or after a synchronous form) waits for
/// it. Every other loom_rt_* call is done with its buffers when it returns
/// (for cuda artifacts: in stream order); --loom-hoist-deallocs relies on
/// this to free a temporary right after its last use.
int64_t loom_rt_all_reduce_start(int64_t group, void *buf, int64_t count,
                                 int32_t dtype, int32_t op);
int64_t loom_rt_broadcast_start(int64_t group, void *buf, int64_t count,
                                int32_t dtype, int32_t root);
/// The resizing collectives copy `send` before returning (compiled code may
/// reuse its buffer at once); `recv` belongs to the runtime until the wait.
int64_t loom_rt_reduce_scatter_start(int64_t group, const void *send,
                                     void *recv, int64_t count, int32_t dtype,
                                     int32_t op);
int64_t loom_rt_all_gather_start(int64_t group, const void *send, void *recv,
                                 int64_t count, int32_t dtype);
void loom_rt_wait(int64_t handle);

/// Transfers between the host's memory and the compute device's
/// (zeroth-order training with offloaded parameters, docs/zo.md): copies
/// `bytes` from `src` to `dst` over the link in `direction`, a
/// loom_transfer_direction. Each direction is a queue: its transfers arrive
/// in issue order, one after the other, while the other direction and the
/// compute go on. Returns a handle for loom_rt_wait (a negative number: the
/// collectives' handles are positive). On the CPU target both buffers are
/// host memory: the data is copied before the call returns, and
/// loom_rt_wait blocks until the transfer would have arrived over a link of
/// the modelled bandwidth (loom-run --offload-bandwidth; none: at once).
enum loom_transfer_direction {
  LOOM_TRANSFER_UPLOAD = 0,
  LOOM_TRANSFER_OFFLOAD = 1
};
int64_t loom_rt_transfer_start(void *dst, const void *src, int64_t bytes,
                               int32_t direction);

/// Zeroth-order training with offloaded parameters (docs/zo.md) defers a
/// step's update to the next step: the state LOOM_ZO_PENDING_STATE carries
/// it, and the entry LOOM_ZO_FLUSH_ENTRY (one input, the step just taken)
/// applies it to every parameter and clears it. The runtime calls that entry
/// before anything reads the parameters between steps, so the state is zero
/// in every checkpoint: a checkpoint may lack it (it loads as zeros), and
/// an artifact without it may load a checkpoint that has it.
#define LOOM_ZO_PENDING_STATE "zo.pending"
#define LOOM_ZO_FLUSH_ENTRY "zo_flush"

/// Gradient compression (loomc --compress, docs/compression.md). In place:
/// buf (`count` f32 elements: gradient `slot` of the manifest's compression
/// object) = the mean over the ranks of their compressed accumulated
/// gradients, with the method the run's plan gives the slot at this step;
/// the runtime keeps each slot's error feedback. `dtype` must be LOOM_F32
/// and `op` LOOM_MEAN. Without a trainer around the call (no plan), a plain
/// mean. The start form is asynchronous like loom_rt_all_reduce_start.
void loom_rt_compressed_all_reduce(int64_t group, void *buf, int64_t count,
                                   int32_t dtype, int32_t op, int32_t slot);
int64_t loom_rt_compressed_all_reduce_start(int64_t group, void *buf,
                                            int64_t count, int32_t dtype,
                                            int32_t op, int32_t slot);

/// Copy between two strided memrefs (MLIR's `memref.copy` of non-contiguous
/// views lowers to this). Descriptors follow MLIR's UnrankedMemRefType layout.
struct loom_unranked_memref {
  int64_t rank;
  void *descriptor;
};
void memrefCopy(int64_t elemSize, struct loom_unranked_memref *src,
                struct loom_unranked_memref *dst);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // LOOM_RUNTIME_ABI_H
