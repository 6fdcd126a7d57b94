// SV frames to and from capture files: `sv pcap` (a publisher's frames as
// a classic pcap that Wireshark dissects as `sv`, the offline counterpart of
// `sv publish`) and `sv decode` (a capture through the subscriber).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "layersec/sv/publisher.h"
#include "layersec/sv/subscriber.h"

namespace layersec::sv_io {

// Writes the next `frames` frames of `pub` (samples from fill_samples(),
// samples.h; each stamped with its deadline) to `path` as classic pcap:
// microsecond timestamps, LINKTYPE_ETHERNET, little-endian whatever the
// host. Written through base/file.h's OutputFile: a symlink at the path is
// refused, every write and the final fsync/close are checked, and a failure
// throws FileError naming the path; a frame that cannot be built throws
// std::runtime_error "publisher failed: ...".
void write_capture(const std::string& path, sv::Publisher& pub, std::uint64_t frames);

// Runs every record of the Ethernet capture at `path` through `sub` (first
// poll(t), then on_frame(frame, t) at the record's time t). With
// `per_frame`, one JSON line per frame goes there: {"frame": n, "delivered":
// true, "svID", "smpCnt": [...], "missing"} or {"frame": n, "delivered":
// false, "reason"}. Returns {"counters": {counters of `stream`
// (report_json.h), "frames", "malformed", "unknown_appid"}}. Throws
// std::runtime_error "cannot read PATH: ..." when the capture cannot be read.
nlohmann::json decode_capture(const std::string& path, sv::Subscriber& sub, std::size_t stream,
                              std::ostream* per_frame);

}  // namespace layersec::sv_io
