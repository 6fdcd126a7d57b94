// pcap files over libpcap: a writer (pcap_open_dead + pcap_dump_open) that
// any topology can feed (it is a FrameRecorder), a reader (pcap_open_offline)
// for tests and tools, and a live capture on an interface (pcap_open_live)
// that feeds a FrameRecorder, for namespace and host topologies.
//
// All link types are DLT_EN10MB (Ethernet, no FCS). Timestamps are written
// with nanosecond precision (the 0xa1b23c4d pcap magic) by default.
//
// Files are handled as base/file.h says: the writer opens its output with
// open_output_file (O_NOFOLLOW: a symlink at the path is refused, never
// followed; a FIFO, device or directory is refused) and reports every write,
// flush, fsync or close failure from close() as a FileError naming the path
// (a full disk is an error, not "wrote 5 frames"). The reader opens with
// open_regular_file (a FIFO cannot block it; only regular files are read)
// and tells a truncated capture (kTruncated) and a corrupt one (kReadFailed)
// from the end of the file (kEndOfFile); read_all() throws PcapReadError for
// either, so a short or damaged capture is never taken for a complete one.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
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
  kReadFailed,   // reader: a corrupt record (bad length) or a read error
  kEndOfFile,    // reader: no more records
  kTruncated,    // reader: the file ends inside the file header or a record
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

  // Writes one record (snap length 65535). Negative times clamp to 0. After
  // a write error nothing more is written and close() throws.
  void record(TimePoint time, ByteSpan frame) override;
  void flush();
  // Flushes, fsyncs and closes; later records are ignored. Throws
  // layersec::FileError (kWrite, "PATH: write failed: <reason>") if any
  // record, the flush or the fsync failed. Idempotent; the destructor closes
  // without reporting, so call close() to learn whether the capture is whole.
  void close();
  [[nodiscard]] std::uint64_t records() const { return records_; }
  // True once a write failed (close() will throw).
  [[nodiscard]] bool failed() const { return write_errno_ != 0; }

 private:
  PcapWriter() = default;
  // Closes everything; returns the first write error (errno) or 0.
  int finish() noexcept;
  pcap* pcap_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  PcapPrecision precision_ = PcapPrecision::kNano;
  Duration epoch_offset_;
  std::uint64_t records_ = 0;
  int write_errno_ = 0;
  std::string path_;
};

struct PcapRecord {
  TimePoint time;  // from the file's timestamp (ns since the Unix epoch)
  std::uint32_t original_length = 0;
  std::vector<std::uint8_t> frame;  // captured bytes
};

// read_all() could not read a capture to its end. kind() is kTruncated or
// kReadFailed; what() is "PATH: truncated capture: record N: <libpcap text>".
class PcapReadError : public std::runtime_error {
 public:
  PcapReadError(PcapError kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  [[nodiscard]] PcapError kind() const { return kind_; }

 private:
  PcapError kind_;
};

class PcapReader {
 public:
  // kOpenFailed (missing, not a regular file, not a pcap), kTruncated (the
  // file header is cut short) or kWrongLinkType; `error` gets the reason
  // with the path.
  static Result<PcapReader, PcapError> open(const std::string& path, std::string* error = nullptr);
  PcapReader(PcapReader&& o) noexcept;
  PcapReader& operator=(PcapReader&& o) noexcept;
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;
  ~PcapReader();

  // The next record; kEndOfFile at the clean end of the file, kTruncated if
  // the file ends inside a record, kReadFailed on a corrupt record or a read
  // error (last_error() says which, with the path and record number).
  Result<PcapRecord, PcapError> next();
  // Reads all remaining records. Throws PcapReadError unless the file ends
  // cleanly after the last record.
  std::vector<PcapRecord> read_all();
  [[nodiscard]] const std::string& last_error() const { return last_error_; }

 private:
  PcapReader() = default;
  pcap* pcap_ = nullptr;
  std::string path_;
  std::uint64_t read_ = 0;
  PcapError end_ = PcapError::kEndOfFile;  // what next() returns once closed
  std::string last_error_;
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
