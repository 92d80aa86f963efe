//===- Philox.cpp - Counter-based normal numbers in arith ops -------------===//
#include "passes/ToLinalg/Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;

// Random123's Philox4x32 multipliers and Weyl key increments.
static constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;
static constexpr uint32_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
static constexpr int kRounds = 10;

static Value i32(OpBuilder &b, Location loc, uint32_t v) {
  return arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
}

std::array<Value, 4> mlir::loom::buildPhilox4x32(OpBuilder &b, Location loc,
                                                 std::array<Value, 4> c,
                                                 uint64_t key) {
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
  Value m0 = i32(b, loc, kM0), m1 = i32(b, loc, kM1);
  for (int r = 0; r < kRounds; ++r) {
    // The key schedule is a constant: round r uses key + r * W (mod 2^32).
    Value rk0 = i32(b, loc, k0 + uint32_t(r) * kW0);
    Value rk1 = i32(b, loc, k1 + uint32_t(r) * kW1);
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, c[2]);
    Value x0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), c[1]), rk0);
    Value x2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), c[3]), rk1);
    c = {x0, p1.getLow(), x2, p0.getLow()};
  }
  return c;
}

Value mlir::loom::buildIrwinHallNormal(OpBuilder &b, Location loc, Type et,
                                       std::array<Value, 4> words) {
  Value mask = i32(b, loc, 0xFFFF), sixteen = i32(b, loc, 16);
  Value sum;
  for (Value w : words) {
    Value lo = arith::AndIOp::create(b, loc, w, mask);
    Value hi = arith::ShRUIOp::create(b, loc, w, sixteen);
    Value pair = arith::AddIOp::create(b, loc, lo, hi);
    sum = sum ? arith::AddIOp::create(b, loc, sum, pair) : pair;
  }
  // Centred in integers (exact), converted once (exact: |s| < 2^19), scaled
  // once: the same bits on every target.
  Value centred = arith::SubIOp::create(b, loc, sum, i32(b, loc, 4 * 65535));
  Value f = arith::SIToFPOp::create(b, loc, et, centred);
  double scale = 1.0 / std::sqrt(8.0 * (65536.0 * 65536.0 - 1.0) / 12.0);
  Value c = arith::ConstantOp::create(b, loc, b.getFloatAttr(et, scale));
  return arith::MulFOp::create(b, loc, f, c);
}
