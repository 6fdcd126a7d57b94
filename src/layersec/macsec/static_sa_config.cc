#include "layersec/macsec/static_sa_config.h"

#include <algorithm>
#include <stdexcept>

#include "layersec/base/bytes.h"
#include "layersec/base/hex.h"

namespace layersec::macsec {

std::vector<std::uint8_t> parse_hex_option(const std::string& what, const std::string& text, std::size_t size) {
  auto v = from_hex(text);
  if (!v) throw std::runtime_error(what + ": not valid hex");
  if (size != 0 && v->size() != size)
    throw std::runtime_error(what + ": expected " + std::to_string(size) + " octets");
  return *v;
}

CipherSuite static_sa_suite(const StaticSaOptions& o) {
  auto s = cipher_suite_from_string(o.suite);
  if (!s) throw std::runtime_error("unknown cipher suite " + o.suite);
  return *s;
}

void check_static_sa_pn(const StaticSaOptions& o, CipherSuite suite) {
  if (o.pn > max_pn(suite)) {
    throw std::runtime_error("--pn: " + std::to_string(o.pn) + " is beyond the last PN of " +
                             std::string(to_string(suite)) + " (" + std::to_string(max_pn(suite)) + ")");
  }
}

Sci sci_option(const char* what, const std::string& text) {
  const Sci sci{load_be64(parse_hex_option(what, text, 8).data())};
  if (sci.port() == 0)
    throw std::runtime_error(std::string(what) + ": port identifier 0 (the last 4 hex digits) names no port");
  return sci;
}

SecYConfig static_secy_config(const StaticSaOptions& o, CipherSuite suite) {
  SecYConfig c;
  c.suite = suite;
  c.sci = sci_option("--sci", o.sci);
  c.confidentiality = !o.integrity;
  if (o.offset != 0 && o.offset != 30 && o.offset != 50)
    throw std::runtime_error("--offset: must be 0, 30 or 50 (802.1AE-2018 10.7.24)");
  c.confidentiality_offset = static_cast<std::uint8_t>(o.offset);
  c.include_sci = !o.no_sci;
  c.use_es = o.es;
  c.vlan_mode = o.clear_tags ? VlanMode::kClearTag : VlanMode::kStandard;
  c.clear_tags_in_icv = o.clear_tags_in_icv;
  if (o.validate_frames == "strict") {
    c.validate_frames = ValidateFrames::kStrict;
  } else if (o.validate_frames == "check") {
    c.validate_frames = ValidateFrames::kCheck;
  } else if (o.validate_frames == "disabled") {
    c.validate_frames = ValidateFrames::kDisabled;
  } else {
    throw std::runtime_error("--validate must be strict, check or disabled");
  }
  c.replay_protect = !o.no_replay;
  c.replay_window = o.window;
  return c;
}

SaKeys static_sa_keys(const StaticSaOptions& o, const SecretBytes& sak) {
  SaKeys k;
  k.sak = sak.span();
  k.ssci = load_be32(parse_hex_option("--ssci", o.ssci, 4).data());
  const auto salt = parse_hex_option("--salt", o.salt, kSaltSize);
  std::copy(salt.begin(), salt.end(), k.salt.begin());
  return k;
}

}  // namespace layersec::macsec
