#include "layersec/net/pcap.h"

#include <pcap/pcap.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "layersec/base/file.h"

namespace layersec::net {

namespace {
constexpr int kSnapLength = 65535;

void set_error(std::string* out, const std::string& text) {
  if (out) *out = text;
}

// libpcap reports a short file as "truncated dump file; ..." (sf-pcap.c).
bool is_truncation(const char* text) { return std::strncmp(text, "truncated dump file", 19) == 0; }

// A stdio stream over base/file.h's open_regular_file / open_output_file, so
// libpcap works on a descriptor we checked; nullptr with `error` set.
template <class OpenFd>
FILE* open_stream(const std::string& path, OpenFd open_fd, const char* mode, std::string* error) {
  int fd = -1;
  try {
    fd = open_fd(path);
  } catch (const FileError& e) {
    set_error(error, e.what());
    return nullptr;
  }
  FILE* f = ::fdopen(fd, mode);
  if (f == nullptr) {
    set_error(error, path + ": " + std::strerror(errno));
    ::close(fd);
  }
  return f;
}
}  // namespace

const char* to_string(PcapError e) {
  switch (e) {
    case PcapError::kOpenFailed: return "open failed";
    case PcapError::kWrongLinkType: return "not an Ethernet capture";
    case PcapError::kReadFailed: return "corrupt capture";
    case PcapError::kEndOfFile: return "end of file";
    case PcapError::kTimeout: return "timeout";
    case PcapError::kTruncated: return "truncated capture";
  }
  return "unknown";
}

// ---------------------------------------------------------------- writer

Result<PcapWriter, PcapError> PcapWriter::open(const std::string& path, PcapPrecision precision,
                                               Duration epoch_offset, std::string* error) {
  PcapWriter w;
  w.precision_ = precision;
  w.epoch_offset_ = epoch_offset;
  w.path_ = path;
  w.pcap_ = pcap_open_dead_with_tstamp_precision(
      DLT_EN10MB, kSnapLength, precision == PcapPrecision::kNano ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO);
  if (!w.pcap_) {
    set_error(error, "pcap_open_dead failed");
    return Err(PcapError::kOpenFailed);
  }
  // Our own open (no symlink, regular file only), then libpcap on the stream.
  FILE* f = open_stream(path, [](const std::string& p) { return open_output_file(p, 0644); }, "wb", error);
  if (f == nullptr) return Err(PcapError::kOpenFailed);
  w.dumper_ = pcap_dump_fopen(w.pcap_, f);
  if (!w.dumper_) {
    set_error(error, path + ": pcap_dump_fopen: " + pcap_geterr(w.pcap_));
    std::fclose(f);
    return Err(PcapError::kOpenFailed);
  }
  return w;
}

PcapWriter::PcapWriter(PcapWriter&& o) noexcept
    : pcap_(std::exchange(o.pcap_, nullptr)),
      dumper_(std::exchange(o.dumper_, nullptr)),
      precision_(o.precision_),
      epoch_offset_(o.epoch_offset_),
      records_(o.records_),
      write_errno_(o.write_errno_),
      path_(std::move(o.path_)) {}

PcapWriter& PcapWriter::operator=(PcapWriter&& o) noexcept {
  if (this != &o) {
    (void)finish();
    pcap_ = std::exchange(o.pcap_, nullptr);
    dumper_ = std::exchange(o.dumper_, nullptr);
    precision_ = o.precision_;
    epoch_offset_ = o.epoch_offset_;
    records_ = o.records_;
    write_errno_ = o.write_errno_;
    path_ = std::move(o.path_);
  }
  return *this;
}

PcapWriter::~PcapWriter() { (void)finish(); }

void PcapWriter::record(TimePoint time, ByteSpan frame) {
  if (!dumper_ || write_errno_ != 0) return;
  std::int64_t ns = (time + epoch_offset_).ns();
  if (ns < 0) ns = 0;
  pcap_pkthdr h{};
  h.ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  const std::int64_t frac = ns % 1'000'000'000;
  // With nanosecond precision libpcap stores the fraction field as is.
  h.ts.tv_usec = static_cast<suseconds_t>(precision_ == PcapPrecision::kNano ? frac : frac / 1000);
  h.len = static_cast<bpf_u_int32>(frame.size());
  h.caplen = static_cast<bpf_u_int32>(frame.size() < kSnapLength ? frame.size() : kSnapLength);
  errno = 0;
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, frame.data());
  // pcap_dump ignores fwrite's result; the stream's error flag is sticky.
  if (std::ferror(pcap_dump_file(dumper_)) != 0) {
    write_errno_ = errno != 0 ? errno : EIO;
    return;
  }
  ++records_;
}

void PcapWriter::flush() {
  if (dumper_ && write_errno_ == 0 && pcap_dump_flush(dumper_) != 0) write_errno_ = errno != 0 ? errno : EIO;
}

int PcapWriter::finish() noexcept {
  if (dumper_) {
    FILE* f = pcap_dump_file(dumper_);
    errno = 0;
    if (write_errno_ == 0 && pcap_dump_flush(dumper_) != 0) write_errno_ = errno != 0 ? errno : EIO;
    if (write_errno_ == 0 && std::ferror(f) != 0) write_errno_ = EIO;
    if (write_errno_ == 0 && ::fsync(::fileno(f)) != 0 && errno != EINVAL) write_errno_ = errno;
    // pcap_dump_close is fclose() and drops its result; everything was
    // flushed and fsync'ed above, so nothing is left for close to lose.
    pcap_dump_close(dumper_);
    dumper_ = nullptr;
  }
  if (pcap_) {
    pcap_close(pcap_);
    pcap_ = nullptr;
  }
  return write_errno_;
}

void PcapWriter::close() {
  const bool was_open = dumper_ != nullptr;
  const int e = finish();
  if (was_open && e != 0) throw FileError(FileErrorKind::kWrite, path_, std::string("write failed: ") + std::strerror(e));
}

// ---------------------------------------------------------------- reader

Result<PcapReader, PcapError> PcapReader::open(const std::string& path, std::string* error) {
  PcapReader r;
  r.path_ = path;
  // A FIFO would block pcap_open_offline: open and check it ourselves.
  FILE* f = open_stream(path, [](const std::string& p) { return open_regular_file(p); }, "rb", error);
  if (f == nullptr) return Err(PcapError::kOpenFailed);
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  r.pcap_ = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (!r.pcap_) {
    std::fclose(f);  // libpcap closes the stream only once it owns it
    const bool truncated = is_truncation(errbuf);
    set_error(error, path + ": " + (truncated ? "truncated capture: " : "not a pcap capture: ") + errbuf);
    return Err(truncated ? PcapError::kTruncated : PcapError::kOpenFailed);
  }
  if (pcap_datalink(r.pcap_) != DLT_EN10MB) {
    set_error(error, path + ": link type is not Ethernet");
    return Err(PcapError::kWrongLinkType);
  }
  return r;
}

PcapReader::PcapReader(PcapReader&& o) noexcept
    : pcap_(std::exchange(o.pcap_, nullptr)),
      path_(std::move(o.path_)),
      read_(o.read_),
      end_(o.end_),
      last_error_(std::move(o.last_error_)) {}

PcapReader& PcapReader::operator=(PcapReader&& o) noexcept {
  if (this != &o) {
    if (pcap_) pcap_close(pcap_);
    pcap_ = std::exchange(o.pcap_, nullptr);
    path_ = std::move(o.path_);
    read_ = o.read_;
    end_ = o.end_;
    last_error_ = std::move(o.last_error_);
  }
  return *this;
}

PcapReader::~PcapReader() {
  if (pcap_) pcap_close(pcap_);
}

Result<PcapRecord, PcapError> PcapReader::next() {
  if (!pcap_) return Err(end_);
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  const int rc = pcap_next_ex(pcap_, &h, &data);
  if (rc == PCAP_ERROR_BREAK) {
    pcap_close(pcap_);
    pcap_ = nullptr;
    return Err(end_);
  }
  if (rc != 1) {
    // PCAP_ERROR: a short read inside a record, an impossible length, or an
    // I/O error (savefile readers never return 0).
    const char* why = pcap_geterr(pcap_);
    const bool truncated = is_truncation(why);
    last_error_ = path_ + ": " + (truncated ? "truncated capture" : "corrupt capture") + ": record " +
                  std::to_string(read_ + 1) + ": " + why;
    pcap_close(pcap_);
    pcap_ = nullptr;
    end_ = truncated ? PcapError::kTruncated : PcapError::kReadFailed;  // sticky
    return Err(end_);
  }
  ++read_;
  PcapRecord rec;
  rec.time = TimePoint::from_ns(static_cast<std::int64_t>(h->ts.tv_sec) * 1'000'000'000 + h->ts.tv_usec);
  rec.original_length = h->len;
  rec.frame.assign(data, data + h->caplen);
  return rec;
}

std::vector<PcapRecord> PcapReader::read_all() {
  std::vector<PcapRecord> out;
  for (;;) {
    auto r = next();
    if (!r) {
      if (r.error() == PcapError::kEndOfFile) break;
      throw PcapReadError(r.error(), last_error_);
    }
    out.push_back(std::move(r).value());
  }
  return out;
}

// ---------------------------------------------------------------- live capture

Result<LiveCapture, PcapError> LiveCapture::open(const std::string& interface, const std::string& filter,
                                                 bool promiscuous, std::string* error) {
  LiveCapture c;
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  c.pcap_ = pcap_create(interface.c_str(), errbuf);
  if (!c.pcap_) {
    set_error(error, std::string("pcap_create: ") + errbuf);
    return Err(PcapError::kOpenFailed);
  }
  pcap_set_snaplen(c.pcap_, kSnapLength);
  pcap_set_promisc(c.pcap_, promiscuous ? 1 : 0);
  pcap_set_immediate_mode(c.pcap_, 1);
  pcap_set_tstamp_precision(c.pcap_, PCAP_TSTAMP_PRECISION_NANO);
  if (pcap_activate(c.pcap_) < 0) {
    set_error(error, std::string("pcap_activate: ") + pcap_geterr(c.pcap_));
    return Err(PcapError::kOpenFailed);
  }
  if (pcap_datalink(c.pcap_) != DLT_EN10MB) {
    set_error(error, "interface is not Ethernet");
    return Err(PcapError::kWrongLinkType);
  }
  if (!filter.empty()) {
    bpf_program prog{};
    if (pcap_compile(c.pcap_, &prog, filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0) {
      set_error(error, std::string("pcap_compile: ") + pcap_geterr(c.pcap_));
      return Err(PcapError::kOpenFailed);
    }
    const int rc = pcap_setfilter(c.pcap_, &prog);
    pcap_freecode(&prog);
    if (rc != 0) {
      set_error(error, std::string("pcap_setfilter: ") + pcap_geterr(c.pcap_));
      return Err(PcapError::kOpenFailed);
    }
  }
  if (pcap_setnonblock(c.pcap_, 1, errbuf) != 0) {
    set_error(error, std::string("pcap_setnonblock: ") + errbuf);
    return Err(PcapError::kOpenFailed);
  }
  return c;
}

LiveCapture::LiveCapture(LiveCapture&& o) noexcept : pcap_(std::exchange(o.pcap_, nullptr)) {}

LiveCapture& LiveCapture::operator=(LiveCapture&& o) noexcept {
  if (this != &o) {
    if (pcap_) pcap_close(pcap_);
    pcap_ = std::exchange(o.pcap_, nullptr);
  }
  return *this;
}

LiveCapture::~LiveCapture() {
  if (pcap_) pcap_close(pcap_);
}

int LiveCapture::fd() const { return pcap_ ? pcap_get_selectable_fd(pcap_) : -1; }

std::size_t LiveCapture::poll(FrameRecorder& sink) {
  if (!pcap_) return 0;
  auto cb = [](u_char* user, const pcap_pkthdr* h, const u_char* bytes) {
    auto* s = reinterpret_cast<FrameRecorder*>(user);
    s->record(TimePoint::from_ns(static_cast<std::int64_t>(h->ts.tv_sec) * 1'000'000'000 + h->ts.tv_usec),
              ByteSpan(bytes, h->caplen));
  };
  const int n = pcap_dispatch(pcap_, -1, cb, reinterpret_cast<u_char*>(&sink));
  return n > 0 ? static_cast<std::size_t>(n) : 0;
}

}  // namespace layersec::net
