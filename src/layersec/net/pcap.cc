#include "layersec/net/pcap.h"

#include <pcap/pcap.h>

#include <utility>

namespace layersec::net {

namespace {
constexpr int kSnapLength = 65535;

void set_error(std::string* out, const std::string& text) {
  if (out) *out = text;
}
}  // namespace

const char* to_string(PcapError e) {
  switch (e) {
    case PcapError::kOpenFailed: return "open failed";
    case PcapError::kWrongLinkType: return "not an Ethernet capture";
    case PcapError::kReadFailed: return "read failed";
    case PcapError::kEndOfFile: return "end of file";
    case PcapError::kTimeout: return "timeout";
  }
  return "unknown";
}

// ---------------------------------------------------------------- writer

Result<PcapWriter, PcapError> PcapWriter::open(const std::string& path, PcapPrecision precision,
                                               Duration epoch_offset, std::string* error) {
  PcapWriter w;
  w.precision_ = precision;
  w.epoch_offset_ = epoch_offset;
  w.pcap_ = pcap_open_dead_with_tstamp_precision(
      DLT_EN10MB, kSnapLength, precision == PcapPrecision::kNano ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO);
  if (!w.pcap_) {
    set_error(error, "pcap_open_dead failed");
    return Err(PcapError::kOpenFailed);
  }
  w.dumper_ = pcap_dump_open(w.pcap_, path.c_str());
  if (!w.dumper_) {
    set_error(error, std::string("pcap_dump_open: ") + pcap_geterr(w.pcap_));
    return Err(PcapError::kOpenFailed);
  }
  return w;
}

PcapWriter::PcapWriter(PcapWriter&& o) noexcept
    : pcap_(std::exchange(o.pcap_, nullptr)),
      dumper_(std::exchange(o.dumper_, nullptr)),
      precision_(o.precision_),
      epoch_offset_(o.epoch_offset_),
      records_(o.records_) {}

PcapWriter& PcapWriter::operator=(PcapWriter&& o) noexcept {
  if (this != &o) {
    close();
    pcap_ = std::exchange(o.pcap_, nullptr);
    dumper_ = std::exchange(o.dumper_, nullptr);
    precision_ = o.precision_;
    epoch_offset_ = o.epoch_offset_;
    records_ = o.records_;
  }
  return *this;
}

PcapWriter::~PcapWriter() { close(); }

void PcapWriter::record(TimePoint time, ByteSpan frame) {
  if (!dumper_) return;
  std::int64_t ns = (time + epoch_offset_).ns();
  if (ns < 0) ns = 0;
  pcap_pkthdr h{};
  h.ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  const std::int64_t frac = ns % 1'000'000'000;
  // With nanosecond precision libpcap stores the fraction field as is.
  h.ts.tv_usec = static_cast<suseconds_t>(precision_ == PcapPrecision::kNano ? frac : frac / 1000);
  h.len = static_cast<bpf_u_int32>(frame.size());
  h.caplen = static_cast<bpf_u_int32>(frame.size() < kSnapLength ? frame.size() : kSnapLength);
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, frame.data());
  ++records_;
}

void PcapWriter::flush() {
  if (dumper_) pcap_dump_flush(dumper_);
}

void PcapWriter::close() {
  if (dumper_) {
    pcap_dump_close(dumper_);
    dumper_ = nullptr;
  }
  if (pcap_) {
    pcap_close(pcap_);
    pcap_ = nullptr;
  }
}

// ---------------------------------------------------------------- reader

Result<PcapReader, PcapError> PcapReader::open(const std::string& path, std::string* error) {
  PcapReader r;
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  r.pcap_ = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (!r.pcap_) {
    set_error(error, std::string("pcap_open_offline: ") + errbuf);
    return Err(PcapError::kOpenFailed);
  }
  if (pcap_datalink(r.pcap_) != DLT_EN10MB) {
    set_error(error, "link type is not Ethernet");
    return Err(PcapError::kWrongLinkType);
  }
  return r;
}

PcapReader::PcapReader(PcapReader&& o) noexcept : pcap_(std::exchange(o.pcap_, nullptr)) {}

PcapReader& PcapReader::operator=(PcapReader&& o) noexcept {
  if (this != &o) {
    if (pcap_) pcap_close(pcap_);
    pcap_ = std::exchange(o.pcap_, nullptr);
  }
  return *this;
}

PcapReader::~PcapReader() {
  if (pcap_) pcap_close(pcap_);
}

Result<PcapRecord, PcapError> PcapReader::next() {
  if (!pcap_) return Err(PcapError::kEndOfFile);
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  const int rc = pcap_next_ex(pcap_, &h, &data);
  if (rc == PCAP_ERROR_BREAK) return Err(PcapError::kEndOfFile);
  if (rc != 1) return Err(PcapError::kReadFailed);
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
    if (!r) break;
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
