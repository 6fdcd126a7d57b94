#include "layersec/sv_io/capture.h"

#include <algorithm>
#include <array>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "layersec/base/file.h"
#include "layersec/net/pcap.h"
#include "layersec/sv_io/report_json.h"
#include "layersec/sv_io/samples.h"

namespace layersec::sv_io {
namespace {

void put_le32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// The 24-byte global header of a classic pcap.
void write_pcap_header(OutputFile& out) {
  std::array<std::uint8_t, 24> h{};
  put_le32(h.data(), 0xA1B2C3D4);   // magic, microsecond timestamps
  h[4] = 2;                         // version 2.4
  h[6] = 4;
  put_le32(h.data() + 16, 65535);   // snaplen
  put_le32(h.data() + 20, 1);       // LINKTYPE_ETHERNET
  out.write(ByteSpan(h));
}

// A 16-byte record header, then the frame.
void write_pcap_record(OutputFile& out, TimePoint t, ByteSpan frame) {
  std::array<std::uint8_t, 16> h{};
  const std::int64_t ns = std::max<std::int64_t>(t.ns(), 0);
  put_le32(h.data(), static_cast<std::uint32_t>(ns / 1'000'000'000));
  put_le32(h.data() + 4, static_cast<std::uint32_t>((ns % 1'000'000'000) / 1000));
  put_le32(h.data() + 8, static_cast<std::uint32_t>(frame.size()));
  put_le32(h.data() + 12, static_cast<std::uint32_t>(frame.size()));
  out.write(ByteSpan(h));
  out.write(frame);
}

}  // namespace

void write_capture(const std::string& path, sv::Publisher& pub, std::uint64_t frames) {
  const sv::Profile& p = pub.profile();
  OutputFile out(path);  // FileError names the path (symlink, not regular, write or close failure)
  write_pcap_header(out);
  std::vector<sv::Sample> samples(p.asdus_per_frame * 8);
  for (std::uint64_t k = 0; k < frames; ++k) {
    fill_samples(samples, p.asdus_per_frame, k * p.asdus_per_frame, p.sample_rate_hz);
    const TimePoint t = pub.next_deadline();
    auto f = pub.build_next(samples);
    if (!f) throw std::runtime_error("publisher failed: " + std::string(to_string(pub.last_security_error())));
    write_pcap_record(out, t, *f);
  }
  out.close();
}

nlohmann::json decode_capture(const std::string& path, sv::Subscriber& sub, std::size_t stream,
                              std::ostream* per_frame) {
  std::string why;
  auto reader = net::PcapReader::open(path, &why);
  if (!reader) throw std::runtime_error("cannot read " + path + ": " + why);
  std::size_t n = 0;
  for (const auto& r : reader->read_all()) {
    ++n;
    const TimePoint now = r.time;
    sub.poll(now);
    auto d = sub.on_frame(r.frame, now);
    if (!per_frame) {
      d.ignore();
      continue;
    }
    nlohmann::json line{{"frame", n}};
    if (d) {
      line["delivered"] = true;
      line["svID"] = std::string(d->frame->asdus[0].sv_id_string());
      std::vector<std::uint16_t> cnts;
      for (std::size_t i = 0; i < d->frame->no_asdu; ++i) cnts.push_back(d->frame->asdus[i].smp_cnt);
      line["smpCnt"] = cnts;
      line["missing"] = d->missing_samples;
    } else {
      line["delivered"] = false;
      line["reason"] = std::string(to_string(d.error()));
    }
    *per_frame << line.dump() << "\n";
  }
  nlohmann::json counters = counters_json(sub.counters(stream));
  counters["frames"] = n;
  counters["malformed"] = sub.malformed_total();
  counters["unknown_appid"] = sub.unknown_appid();
  return nlohmann::json{{"counters", counters}};
}

}  // namespace layersec::sv_io
