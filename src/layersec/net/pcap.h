// pcap files over libpcap: a writer (pcap_open_dead + pcap_dump_open) that
// any topology can feed (it is a FrameRecorder), a reader (pcap_open_offline)
// for tests and tools, and a live capture on an interface (pcap_open_live)
// that feeds a FrameRecorder, for namespace and host topologies.
//
// All link types are DLT_EN10MB (Ethernet, no FCS). Timestamps are written
// with nanosecond precision (the 0xa1b23c4d pcap magic) by default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "layersec/base/result.h"
#include "layersec/net/recorder.h"

struct pcap;
struct pcap_dumper;

namespace layersec::net {

enum class PcapError : std::uint8_t {
  kOpenFailed,   // file or interface could not be opened (see last_error())
  kWrongLinkType,  // reader: not DLT_EN10MB
  kReadFailed,   // reader: a truncated or corrupt record
  kEndOfFile,    // reader: no more records
  kTimeout,      // live capture: nothing arrived within the poll
};
const char* to_string(PcapError e);

enum class PcapPrecision : std::uint8_t { kMicro, kNano };

class PcapWriter final : public FrameRecorder {
 public:
  // Creates (truncates) `path`. `epoch_offset` is added to every timestamp,
  // so simulated time starting at 0 can be shown as a calendar date.
  static Result<PcapWriter, PcapError> open(const std::string& path, PcapPrecision precision = PcapPrecision::kNano,
                                            Duration epoch_offset = Duration::zero(), std::string* error = nullptr);
  PcapWriter(PcapWriter&& o) noexcept;
  PcapWriter& operator=(PcapWriter&& o) noexcept;
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  ~PcapWriter() override;

  // Writes one record (snap length 65535). Negative times clamp to 0.
  void record(TimePoint time, ByteSpan frame) override;
  void flush();
  // Flushes and closes; later records are ignored.
  void close();
  [[nodiscard]] std::uint64_t records() const { return records_; }

 private:
  PcapWriter() = default;
  pcap* pcap_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  PcapPrecision precision_ = PcapPrecision::kNano;
  Duration epoch_offset_;
  std::uint64_t records_ = 0;
};

struct PcapRecord {
  TimePoint time;  // from the file's timestamp (ns since the Unix epoch)
  std::uint32_t original_length = 0;
  std::vector<std::uint8_t> frame;  // captured bytes
};

class PcapReader {
 public:
  static Result<PcapReader, PcapError> open(const std::string& path, std::string* error = nullptr);
  PcapReader(PcapReader&& o) noexcept;
  PcapReader& operator=(PcapReader&& o) noexcept;
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;
  ~PcapReader();

  // The next record, kEndOfFile at the end, kReadFailed on corruption.
  Result<PcapRecord, PcapError> next();
  // Reads all remaining records (stops at the first error).
  std::vector<PcapRecord> read_all();

 private:
  PcapReader() = default;
  pcap* pcap_ = nullptr;
};

// Live capture from a network interface in the calling thread's network
// namespace (open it inside a NetnsScope to capture in a namespace). Needs
// CAP_NET_RAW. Non-blocking: poll() drains what has arrived.
class LiveCapture {
 public:
  // `filter` is a BPF expression ("" for everything). `promiscuous` sees
  // frames for other MACs too.
  static Result<LiveCapture, PcapError> open(const std::string& interface, const std::string& filter = "",
                                             bool promiscuous = true, std::string* error = nullptr);
  LiveCapture(LiveCapture&& o) noexcept;
  LiveCapture& operator=(LiveCapture&& o) noexcept;
  LiveCapture(const LiveCapture&) = delete;
  LiveCapture& operator=(const LiveCapture&) = delete;
  ~LiveCapture();

  // A descriptor that becomes readable when frames are waiting.
  [[nodiscard]] int fd() const;
  // Hands every frame waiting now to `sink` (kernel timestamps on the
  // CLOCK_REALTIME line); returns how many.
  std::size_t poll(FrameRecorder& sink);

 private:
  LiveCapture() = default;
  pcap* pcap_ = nullptr;
};

}  // namespace layersec::net
