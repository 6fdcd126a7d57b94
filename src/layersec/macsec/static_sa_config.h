// The options of `layersec macsec protect|validate` (one SecY with one
// static SA, like `ip macsec add ... key`) and their translation into a
// SecYConfig and SaKeys. Pure validation, no I/O: every refusal is a
// std::runtime_error whose message names the option ("--sci: ...") and the
// rule it breaks (configuration errors, thrown before any frame is touched).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "layersec/base/secret.h"
#include "layersec/macsec/cipher_suite.h"
#include "layersec/macsec/secy.h"

namespace layersec::macsec {

// The command's options as typed (hex strings are parsed by the functions below).
struct StaticSaOptions {
  std::string suite = "GCM-AES-128";
  std::string key_file;                   // SAK (hex text), base/keyfile.h
  std::string sci = "0211223344550001";   // protect: ours; validate: the transmitter's
  int an = 0;
  std::uint64_t pn = 1;                   // protect: first PN; validate: lowest acceptable PN
  std::string ssci = "00000001";          // XPN
  std::string salt = "000000000000000000000000";  // XPN, 12 octets
  bool integrity = false;                 // E=0, C=0
  bool no_sci = false;
  bool es = false;
  int offset = 0;                         // confidentiality offset 0, 30 or 50
  bool clear_tags = false;
  bool clear_tags_in_icv = false;
  std::string validate_frames = "strict";  // strict | check | disabled
  std::uint32_t window = 0;               // replayWindow
  bool no_replay = false;
  std::vector<std::string> frames;        // frames in hex
  std::string pcap_path;                  // protect: also write the secure frames here
  bool stats = false;                     // non-zero MIB counters on the error stream
  bool stats_json = false;                // counters + per-SC/SA tables as one JSON line
};

// `text` as hex octets; with `size` != 0 exactly that many. Throws
// "<what>: not valid hex" or "<what>: expected N octets".
std::vector<std::uint8_t> parse_hex_option(const std::string& what, const std::string& text, std::size_t size = 0);

// The cipher suite named by o.suite. Throws "unknown cipher suite X".
CipherSuite static_sa_suite(const StaticSaOptions& o);

// o.pn within the suite's PN space (802.1AE-2018 10.5.2: never beyond the
// last PN). Throws "--pn: N is beyond the last PN of SUITE (MAX)".
void check_static_sa_pn(const StaticSaOptions& o, CipherSuite suite);

// An SCI option: 16 hex digits whose port part is not 0.
Sci sci_option(const char* what, const std::string& text);

// The SecY configuration of the options (SCI from o.sci). Throws on a bad
// --sci, --offset (0, 30 or 50) or --validate (strict, check, disabled).
SecYConfig static_secy_config(const StaticSaOptions& o, CipherSuite suite);

// The SA keys: `sak` (viewed, not copied: it must outlive the result), the
// SSCI and salt of the options. Throws on a bad --ssci or --salt.
SaKeys static_sa_keys(const StaticSaOptions& o, const SecretBytes& sak);

}  // namespace layersec::macsec
