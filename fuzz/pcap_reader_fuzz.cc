// Fuzz target: the pcap reader (net/pcap.h PcapReader over libpcap's savefile
// parser: file header, magic and precision, link type, record headers). The
// input is written as a file in a private temporary directory and read back.
// Properties: open() and next() never crash; a file read to its clean end
// (kEndOfFile) round-trips: its records written with PcapWriter (nanosecond
// precision) read back to the same timestamps and frames, with the original
// length of each record equal to its frame length. Records whose timestamps
// or sizes PcapWriter cannot represent (before 1970, after 2038, frames over
// the 65535-byte snap length) are left out of the round trip.
// fuzz-iterations: 5000
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "fuzz_support.h"
#include "layersec/net/pcap.h"

using namespace layersec;
using layersec::fuzz::require;

namespace {

constexpr std::size_t kMaxRecords = 4096;

// Reads every record; true if the file ended cleanly.
bool read_records(const std::string& path, std::vector<net::PcapRecord>& out) {
  auto r = net::PcapReader::open(path);
  if (!r) {
    require(r.error() == net::PcapError::kOpenFailed || r.error() == net::PcapError::kTruncated ||
            r.error() == net::PcapError::kWrongLinkType);
    return false;
  }
  for (std::size_t i = 0; i <= kMaxRecords; ++i) {
    auto rec = r->next();
    if (!rec) {
      require(rec.error() == net::PcapError::kEndOfFile || rec.error() == net::PcapError::kTruncated ||
              rec.error() == net::PcapError::kReadFailed);
      // The end is sticky.
      auto again = r->next();
      require(!again && again.error() == rec.error());
      return rec.error() == net::PcapError::kEndOfFile;
    }
    out.push_back(std::move(rec).value());
  }
  return false;
}

bool representable(const net::PcapRecord& r) {
  const std::int64_t ns = r.time.ns();
  return ns >= 0 && ns / 1'000'000'000 <= INT32_MAX && r.frame.size() < 65535;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // PcapWriter::close() fsyncs: on tmpfs that costs nothing.
  static const fuzz::KeyDir dir({}, access("/dev/shm", W_OK) == 0 ? std::filesystem::path("/dev/shm")
                                                                   : std::filesystem::temp_directory_path());
  const std::string in = (dir.path() / "in.pcap").string();
  const std::string out = (dir.path() / "out.pcap").string();
  {
    std::ofstream f(in, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    require(static_cast<bool>(f));
  }
  std::vector<net::PcapRecord> records;
  if (!read_records(in, records)) return 0;

  std::vector<net::PcapRecord> kept;
  for (auto& r : records)
    if (representable(r)) kept.push_back(std::move(r));
  {
    auto w = net::PcapWriter::open(out);
    require(w.ok());
    for (const auto& r : kept) w->record(r.time, r.frame);
    w->close();
  }
  std::vector<net::PcapRecord> back;
  require(read_records(out, back));
  require(back.size() == kept.size());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    require(back[i].time == kept[i].time);
    require(back[i].frame == kept[i].frame);
    require(back[i].original_length == back[i].frame.size());
  }
  return 0;
}
