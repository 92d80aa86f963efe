//===- DocumentAttention.cpp - Attention within documents, blocked --------===//
//
// Implements loom_rt_document_attention and its gradient (abi.h), the CPU
// kernel of loom.document_attention: the queries and keys are grouped by
// document once, and each document's queries meet that document's keys in
// dense GEMMs of their own, so masked (query, key) pairs of different
// documents are never computed; only the causal mask inside a document
// (key position after the query's) is applied to its block.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/abi.h"
#include "support/Export.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <vector>

namespace {

/// One document's tokens: indices into the queries and the keys, each in
/// position order.
struct Group {
  std::vector<int64_t> queries, keys;
};

/// The documents that have queries, with the keys their queries can see.
std::vector<Group> groupByDocument(int64_t nq, int64_t nk, const int32_t *qdoc,
                                   const int32_t *qpos, const int32_t *kdoc,
                                   const int32_t *kpos) {
  std::map<int32_t, Group> byDoc;
  for (int64_t i = 0; i < nq; ++i)
    byDoc[qdoc[i]].queries.push_back(i);
  for (int64_t j = 0; j < nk; ++j) {
    auto it = byDoc.find(kdoc[j]);
    if (it != byDoc.end())
      it->second.keys.push_back(j);
  }
  std::vector<Group> groups;
  for (auto &[doc, g] : byDoc) {
    auto byQueryPos = [&](int64_t a, int64_t b) { return qpos[a] < qpos[b]; };
    auto byKeyPos = [&](int64_t a, int64_t b) { return kpos[a] < kpos[b]; };
    std::sort(g.queries.begin(), g.queries.end(), byQueryPos);
    std::sort(g.keys.begin(), g.keys.end(), byKeyPos);
    // Keys after the last query are seen by none.
    const int32_t last = qpos[g.queries.back()];
    while (!g.keys.empty() && kpos[g.keys.back()] > last)
      g.keys.pop_back();
    groups.push_back(std::move(g));
  }
  return groups;
}

void gemm(bool transA, bool transB, int M, int N, int K, const float *A,
          const float *B, float beta, float *C) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A,
              transA ? M : K, B, transB ? K : N, beta, C, N);
}
void gemm(bool transA, bool transB, int M, int N, int K, const double *A,
          const double *B, double beta, double *C) {
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, M, N, K, 1.0, A,
              transA ? M : K, B, transB ? K : N, beta, C, N);
}

int checkedInt(int64_t v) {
  if (v < 0 || v > std::numeric_limits<int>::max()) {
    std::fprintf(stderr,
                 "loom runtime: document attention size %lld is out "
                 "of range\n",
                 static_cast<long long>(v));
    std::abort();
  }
  return static_cast<int>(v);
}

/// The shapes and index operands of one call.
struct Problem {
  int64_t heads, nq, nk, dh;
  double scale;
  const int32_t *qpos, *kpos;
};

/// Rows `rows` of the [n, dh] matrix `from` (head h's) into `to`.
template <typename T>
void gatherRows(const T *from, const std::vector<int64_t> &rows, int64_t dh,
                T *to) {
  for (size_t r = 0; r < rows.size(); ++r)
    std::copy_n(from + rows[r] * dh, dh, to + r * dh);
}

/// P = softmax(scale S) over keys no later than each query, in place on
/// the [nq x nk] block S.
template <typename T>
void maskedSoftmax(const Problem &p, const Group &g, T *s) {
  const int64_t nq = g.queries.size(), nk = g.keys.size();
  for (int64_t i = 0; i < nq; ++i) {
    T *row = s + i * nk;
    const int32_t at = p.qpos[g.queries[i]];
    // Keys are in position order: the visible ones are a prefix.
    int64_t seen = 0;
    while (seen < nk && p.kpos[g.keys[seen]] <= at)
      ++seen;
    T most = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < seen; ++j)
      most = std::max(most, static_cast<T>(row[j] * p.scale));
    T sum = 0;
    for (int64_t j = 0; j < seen; ++j) {
      row[j] = std::exp(static_cast<T>(row[j] * p.scale) - most);
      sum += row[j];
    }
    for (int64_t j = 0; j < seen; ++j)
      row[j] /= sum;
    std::fill(row + seen, row + nk, T(0));
  }
}

/// One document's block of head h: the gathered Q, K, V and probabilities.
template <typename T>
struct Block {
  std::vector<T> q, k, v, p;

  void load(const Problem &p, const Group &g, const T *Q, const T *K,
            const T *V) {
    const int64_t nq = g.queries.size(), nk = g.keys.size();
    q.resize(nq * p.dh);
    k.resize(nk * p.dh);
    v.resize(nk * p.dh);
    this->p.resize(nq * nk);
    gatherRows(Q, g.queries, p.dh, q.data());
    gatherRows(K, g.keys, p.dh, k.data());
    gatherRows(V, g.keys, p.dh, v.data());
    gemm(false, true, checkedInt(nq), checkedInt(nk), checkedInt(p.dh),
         q.data(), k.data(), T(0), this->p.data());
    maskedSoftmax(p, g, this->p.data());
  }
};

template <typename T>
void forward(const Problem &p, const std::vector<Group> &groups, const T *q,
             const T *k, const T *v, T *out) {
  std::fill(out, out + p.heads * p.nq * p.dh, T(0));
  Block<T> b;
  std::vector<T> o;
  for (int64_t h = 0; h < p.heads; ++h) {
    const T *Q = q + h * p.nq * p.dh, *K = k + h * p.nk * p.dh,
            *V = v + h * p.nk * p.dh;
    T *O = out + h * p.nq * p.dh;
    for (const Group &g : groups) {
      if (g.keys.empty())
        continue;
      b.load(p, g, Q, K, V);
      const int64_t nq = g.queries.size(), nk = g.keys.size();
      o.resize(nq * p.dh);
      gemm(false, false, checkedInt(nq), checkedInt(p.dh), checkedInt(nk),
           b.p.data(), b.v.data(), T(0), o.data());
      for (int64_t i = 0; i < nq; ++i)
        std::copy_n(o.data() + i * p.dh, p.dh, O + g.queries[i] * p.dh);
    }
  }
}

template <typename T>
void backward(const Problem &p, const std::vector<Group> &groups, const T *q,
              const T *k, const T *v, const T *dout, T *dq, T *dk, T *dv) {
  std::fill(dq, dq + p.heads * p.nq * p.dh, T(0));
  std::fill(dk, dk + p.heads * p.nk * p.dh, T(0));
  std::fill(dv, dv + p.heads * p.nk * p.dh, T(0));
  Block<T> b;
  std::vector<T> dO, dP, dQ, dK, dV;
  for (int64_t h = 0; h < p.heads; ++h) {
    const int64_t qOff = h * p.nq * p.dh, kOff = h * p.nk * p.dh;
    for (const Group &g : groups) {
      if (g.keys.empty())
        continue;
      b.load(p, g, q + qOff, k + kOff, v + kOff);
      const int nq = checkedInt(g.queries.size()),
                nk = checkedInt(g.keys.size()), dh = checkedInt(p.dh);
      dO.resize(nq * p.dh);
      gatherRows(dout + qOff, g.queries, p.dh, dO.data());
      // dV = P^T dO; dP = dO V^T; dS = P (dP - rowsum(dP P)) scale.
      dV.resize(nk * p.dh);
      gemm(true, false, nk, dh, nq, b.p.data(), dO.data(), T(0), dV.data());
      dP.resize(static_cast<size_t>(nq) * nk);
      gemm(false, true, nq, nk, dh, dO.data(), b.v.data(), T(0), dP.data());
      for (int i = 0; i < nq; ++i) {
        T *row = dP.data() + static_cast<size_t>(i) * nk;
        const T *pr = b.p.data() + static_cast<size_t>(i) * nk;
        T dot = 0;
        for (int j = 0; j < nk; ++j)
          dot += row[j] * pr[j];
        for (int j = 0; j < nk; ++j)
          row[j] = static_cast<T>(pr[j] * (row[j] - dot) * p.scale);
      }
      // dQ = dS K; dK = dS^T Q.
      dQ.resize(nq * p.dh);
      gemm(false, false, nq, dh, nk, dP.data(), b.k.data(), T(0), dQ.data());
      dK.resize(nk * p.dh);
      gemm(true, false, nk, dh, nq, dP.data(), b.q.data(), T(0), dK.data());
      for (int i = 0; i < nq; ++i)
        std::copy_n(dQ.data() + i * p.dh, p.dh,
                    dq + qOff + g.queries[i] * p.dh);
      // A key belongs to one document: its rows are written once.
      for (int j = 0; j < nk; ++j) {
        std::copy_n(dK.data() + j * p.dh, p.dh, dk + kOff + g.keys[j] * p.dh);
        std::copy_n(dV.data() + j * p.dh, p.dh, dv + kOff + g.keys[j] * p.dh);
      }
    }
  }
}

[[noreturn]] void badDType(int32_t dtype) {
  std::fprintf(stderr,
               "loom runtime: document attention of dtype %d (f32 or f64 "
               "expected)\n",
               dtype);
  std::abort();
}

} // namespace

extern "C" {

LOOM_RT_ABI_EXPORT void
loom_rt_document_attention(int32_t dtype, int64_t heads, int64_t nq, int64_t nk,
                           int64_t dh, double scale, const void *q,
                           const void *k, const void *v, const int32_t *qdoc,
                           const int32_t *qpos, const int32_t *kdoc,
                           const int32_t *kpos, void *out) {
  const Problem p{heads, nq, nk, dh, scale, qpos, kpos};
  auto groups = groupByDocument(nq, nk, qdoc, qpos, kdoc, kpos);
  if (dtype == LOOM_F32)
    forward(p, groups, static_cast<const float *>(q),
            static_cast<const float *>(k), static_cast<const float *>(v),
            static_cast<float *>(out));
  else if (dtype == LOOM_F64)
    forward(p, groups, static_cast<const double *>(q),
            static_cast<const double *>(k), static_cast<const double *>(v),
            static_cast<double *>(out));
  else
    badDType(dtype);
}

LOOM_RT_ABI_EXPORT void loom_rt_document_attention_grad(
    int32_t dtype, int64_t heads, int64_t nq, int64_t nk, int64_t dh,
    double scale, const void *q, const void *k, const void *v, const void *dout,
    const int32_t *qdoc, const int32_t *qpos, const int32_t *kdoc,
    const int32_t *kpos, void *dq, void *dk, void *dv) {
  const Problem p{heads, nq, nk, dh, scale, qpos, kpos};
  auto groups = groupByDocument(nq, nk, qdoc, qpos, kdoc, kpos);
  if (dtype == LOOM_F32)
    backward(p, groups, static_cast<const float *>(q),
             static_cast<const float *>(k), static_cast<const float *>(v),
             static_cast<const float *>(dout), static_cast<float *>(dq),
             static_cast<float *>(dk), static_cast<float *>(dv));
  else if (dtype == LOOM_F64)
    backward(p, groups, static_cast<const double *>(q),
             static_cast<const double *>(k), static_cast<const double *>(v),
             static_cast<const double *>(dout), static_cast<double *>(dq),
             static_cast<double *>(dk), static_cast<double *>(dv));
  else
    badDType(dtype);
}

} // extern "C"
