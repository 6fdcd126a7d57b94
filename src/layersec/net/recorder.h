// FrameRecorder: where captured frames go (a pcap file, a test's vector, ...).
// The simulated segment's taps and the live-capture adapter both feed one, so
// every topology can produce the same kind of capture.
#pragma once

#include "layersec/base/bytes.h"
#include "layersec/base/time.h"

namespace layersec::net {

class FrameRecorder {
 public:
  virtual ~FrameRecorder() = default;
  // Records one whole Ethernet frame (no FCS) seen at `time`. The span is only
  // valid during the call.
  virtual void record(TimePoint time, ByteSpan frame) = 0;
};

}  // namespace layersec::net
