#include "layersec/macsec/frame_tool.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/hex.h"
#include "layersec/base/keyfile.h"
#include "layersec/macsec/link.h"
#include "layersec/macsec/link_config.h"
#include "layersec/macsec/secy.h"
#include "layersec/net/pcap.h"

namespace layersec::macsec {
namespace {

// An Ethernet capture (libpcap via net::PcapWriter); timestamps 1 s apart.
void write_pcap(const std::string& path, const std::vector<std::vector<std::uint8_t>>& frames) {
  std::string why;
  auto w = net::PcapWriter::open(path, net::PcapPrecision::kMicro, Duration::zero(), &why);
  if (!w) throw std::runtime_error("cannot write " + path + ": " + why);
  std::int64_t t = 1700000000;
  for (const auto& f : frames) w->record(TimePoint::from_ns(t++ * 1000000000), f);
  w->close();
}

// The non-zero MIB counters (--stats) and/or one JSON line with the SecY
// counters and the per-SC / per-SA tables (--stats-json).
void print_stats(const StaticSaOptions& o, const SecY& y, std::ostream& err) {
  if (o.stats) {
    y.stats().for_each([&err](std::string_view name, std::uint64_t v) {
      if (v != 0) err << "  " << name << " " << v << "\n";
    });
  }
  if (o.stats_json) {
    nlohmann::json j = per_sc_json(y);
    j["secy"] = to_json(y.stats());
    err << j.dump() << "\n";
  }
}

}  // namespace

SecretBytes load_static_sak(const std::string& path, CipherSuite suite) {
  if (path.empty()) throw std::runtime_error("--key-file is required");
  KeyFileOptions ko;
  ko.expected_size = sak_size(suite);
  std::string detail;
  auto k = load_key_file(path, ko, &detail);
  if (!k) {
    // Names the file, the decoded length and the expected one; never a key byte.
    throw std::runtime_error("--key-file: " + key_file_message(path, k.error(), detail) +
                             (k.error() == KeyFileError::kWrongSize
                                  ? " (" + std::string(to_string(suite)) + " needs a " +
                                        std::to_string(sak_size(suite)) + "-octet SAK)"
                                  : std::string()));
  }
  return std::move(k).value();
}

void protect_static_frames(const StaticSaOptions& o, std::ostream& out, std::ostream& err) {
  const CipherSuite suite = static_sa_suite(o);
  check_static_sa_pn(o, suite);
  const SecretBytes sak = load_static_sak(o.key_file, suite);
  err << "macsec protect: " << to_string(suite) << " key id " << key_id(sak) << " AN " << o.an << " first PN "
      << o.pn << "\n";
  SecY y(static_secy_config(o, suite));
  auto st = y.install_tx_sa(static_cast<std::uint8_t>(o.an), static_sa_keys(o, sak), o.pn);
  if (!st) throw std::runtime_error("install SA: " + std::string(to_string(st.error())));
  if (!y.set_encoding_sa(static_cast<std::uint8_t>(o.an)).ok()) throw std::runtime_error("set encoding SA failed");
  std::vector<std::vector<std::uint8_t>> out_frames;
  for (const auto& text : o.frames) {
    const auto frame = parse_hex_option("--hex", text);
    std::vector<std::uint8_t> secure(frame.size() + 64);
    auto n = y.protect(frame, secure);
    if (!n) throw std::runtime_error("protect: " + std::string(to_string(n.error())));
    secure.resize(*n);
    out << to_hex(secure) << "\n";
    out_frames.push_back(std::move(secure));
  }
  if (!o.pcap_path.empty()) write_pcap(o.pcap_path, out_frames);
  print_stats(o, y, err);
}

bool validate_static_frames(const StaticSaOptions& o, std::ostream& out, std::ostream& err) {
  const CipherSuite suite = static_sa_suite(o);
  check_static_sa_pn(o, suite);
  const SecretBytes sak = load_static_sak(o.key_file, suite);
  SecYConfig c = static_secy_config(o, suite);
  const Sci peer = c.sci;
  // Our own transmit SCI is not used here; it only must not be the peer's.
  c.sci = Sci{peer.value == 0x0200000000000001ULL ? 0x0200000000000002ULL : 0x0200000000000001ULL};
  err << "macsec validate: " << to_string(suite) << " key id " << key_id(sak) << " AN " << o.an << " lowest PN "
      << o.pn << " validateFrames " << to_string(c.validate_frames) << "\n";
  SecY y(c);
  if (!y.add_rx_sc(peer).ok()) throw std::runtime_error("add receive SC failed");
  auto st = y.install_rx_sa(peer, static_cast<std::uint8_t>(o.an), static_sa_keys(o, sak), o.pn);
  if (!st) throw std::runtime_error("install SA: " + std::string(to_string(st.error())));
  bool all_verified = true;
  for (const auto& text : o.frames) {
    auto frame = parse_hex_option("--hex", text);
    auto r = y.validate(frame);
    if (!r) {
      all_verified = false;
      out << "dropped " << to_string(r.error());
      if (r.error() == ReceiveDrop::kBadTag) out << " " << to_string(y.last_sectag_error());
      out << "\n";
    } else if (r->verified()) {
      out << "verified " << to_hex(r->frame) << " " << int(r->an) << " " << r->pn << "\n";
    } else {
      all_verified = false;
      out << "delivered " << to_string(r->disposition) << " " << to_hex(r->frame) << "\n";
    }
  }
  print_stats(o, y, err);
  return all_verified;
}

}  // namespace layersec::macsec
