//===- HangReport.h - Which rank a hung job waited for ----------*- C++ -*-===//
//
// After a job whose collective timed out, `loom-run --ranks N` reads the
// ranks' flight records (FlightRecord.h) and says which ranks did not reach
// the collective the others wait in, or how the ranks' collectives differ.
// The records' recent collectives let it find the first collective where
// the ranks' schedules differ even when it is not the one they wait in (it
// completed, with mismatched buffers, on some ranks). A rank that is stopped
// or stuck outside collectives (in compute, in I/O) writes no record.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_HANGREPORT_H
#define LOOM_RUNTIME_HANGREPORT_H

#include "loom/runtime/FlightRecord.h"

#include <string>
#include <vector>

namespace loom::rt {

/// One sentence on what `records` say about a hung job of `ranks` ranks,
/// or "" when there are none: which ranks did not reach the collective the
/// others wait in, where the ranks' collectives differ (the first number
/// at which two ranks' records, the recent collectives included, show
/// different collectives), which ranks were themselves stopped.
std::string describeHang(std::vector<FlightRecord> records, int ranks);

} // namespace loom::rt

#endif // LOOM_RUNTIME_HANGREPORT_H
