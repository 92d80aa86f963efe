//===- Transfers.h - The modelled host-device link ---------------*- C++
//-*-===//
//
// loom_rt_transfer_start (abi.h) moves an offloaded parameter between the
// host's memory and the compute device's. On the CPU target both are host
// memory, so the runtime models the link instead: the data is copied at the
// start, and a transfer arrives bytes / bandwidth after the previous one in
// its direction did (or after its start, if later). loom_rt_wait blocks
// until then; the time it blocks is the transfer that compute did not hide.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_TRANSFERS_H
#define LOOM_RUNTIME_TRANSFERS_H

#include <cstdint>

namespace loom::rt {

/// The modelled bandwidth of each direction, bytes per second; 0 (the
/// default): no model, every transfer has arrived when its start returns.
void setOffloadBandwidth(double bytesPerSecond);
double offloadBandwidth();

/// Process-wide totals since the start: bytes moved in each direction, and
/// the seconds callers blocked in loom_rt_wait for transfers.
struct TransferTotals {
  int64_t uploadBytes = 0, offloadBytes = 0;
  double blockedSeconds = 0;
};
TransferTotals transferTotals();

/// loom_rt_wait of a transfer's handle (a negative number).
void waitForTransfer(int64_t handle);

} // namespace loom::rt

#endif // LOOM_RUNTIME_TRANSFERS_H
