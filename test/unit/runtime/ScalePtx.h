/*===- ScalePtx.h - A PTX kernel for the GPU runtime tests -----*- C -*-===*
 *
 * Shared by LinearArtifact.c (a hand-written cuda artifact) and
 * CudaDeviceTest.cpp (mgpuModuleLoadJIT), which load the same kernel.
 *
 *===----------------------------------------------------------------------===*/
#ifndef LOOM_TEST_UNIT_RUNTIME_SCALEPTX_H
#define LOOM_TEST_UNIT_RUNTIME_SCALEPTX_H

/* nvcc -ptx -arch=compute_75 of
 *   extern "C" __global__ void loom_scale(double *p, double factor,
 *                                         long long n) {
 *     long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
 *     if (i < n) p[i] *= factor;
 *   }
 * (NUL-terminated, as MLIR embeds PTX). */
static const char kScalePtx[] = ".version 9.0\n"
                                ".target sm_75\n"
                                ".address_size 64\n"
                                ".visible .entry loom_scale(\n"
                                "  .param .u64 loom_scale_param_0,\n"
                                "  .param .f64 loom_scale_param_1,\n"
                                "  .param .u64 loom_scale_param_2\n"
                                ")\n"
                                "{\n"
                                "  .reg .pred %p<2>;\n"
                                "  .reg .b32 %r<4>;\n"
                                "  .reg .f64 %fd<4>;\n"
                                "  .reg .b64 %rd<9>;\n"
                                "  ld.param.u64 %rd2, [loom_scale_param_0];\n"
                                "  ld.param.f64 %fd1, [loom_scale_param_1];\n"
                                "  ld.param.u64 %rd3, [loom_scale_param_2];\n"
                                "  mov.u32 %r1, %ctaid.x;\n"
                                "  mov.u32 %r2, %ntid.x;\n"
                                "  mul.wide.u32 %rd4, %r1, %r2;\n"
                                "  mov.u32 %r3, %tid.x;\n"
                                "  cvt.u64.u32 %rd5, %r3;\n"
                                "  add.s64 %rd1, %rd4, %rd5;\n"
                                "  setp.ge.s64 %p1, %rd1, %rd3;\n"
                                "  @%p1 bra $L__BB0_2;\n"
                                "  cvta.to.global.u64 %rd6, %rd2;\n"
                                "  shl.b64 %rd7, %rd1, 3;\n"
                                "  add.s64 %rd8, %rd6, %rd7;\n"
                                "  ld.global.f64 %fd2, [%rd8];\n"
                                "  mul.f64 %fd3, %fd2, %fd1;\n"
                                "  st.global.f64 [%rd8], %fd3;\n"
                                "$L__BB0_2:\n"
                                "  ret;\n"
                                "}\n";

#endif /* LOOM_TEST_UNIT_RUNTIME_SCALEPTX_H */
