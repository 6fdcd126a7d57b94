// `layersec macsec protect|validate` as library calls: frames in hex through
// one SecY with one static SA, for interop tests with scapy and tshark (an
// I/O adapter: it reads the SAK file and writes pcap files; it belongs to the
// macsec I/O library). The options are static_sa_config.h's.
//
// The SAK file must not be accessible by group or others (base/keyfile.h);
// only a key id (link_config.h key_id) is ever printed, never key material.
#pragma once

#include <ostream>

#include "layersec/base/secret.h"
#include "layersec/macsec/cipher_suite.h"
#include "layersec/macsec/static_sa_config.h"

namespace layersec::macsec {

// The SAK of `suite` from the key file `path` (base/keyfile.h checks: regular
// file, no symlink, mode 0600/0400, hex, the suite's size). Throws
// "--key-file is required" for an empty path, else "--key-file: <path,
// reason, decoded and expected length>" without a key byte.
SecretBytes load_static_sak(const std::string& path, CipherSuite suite);

// Protects o.frames with one transmit SA (AN o.an, first PN o.pn): one line
// per frame on `out`, the secure frame in hex; with o.pcap_path the secure
// frames also as a classic Ethernet pcap (timestamps 1 s apart). `err` gets
// the start-up line (suite, key id, AN, first PN) and, with o.stats /
// o.stats_json, the counters. Throws std::runtime_error on bad options, an
// unusable key file or a frame the SecY refuses.
void protect_static_frames(const StaticSaOptions& o, std::ostream& out, std::ostream& err);

// Validates o.frames with one receive SA of the transmitter o.sci, one line per frame on `out`:
//   verified <hex of delivered frame> <an> <pn>
//   delivered <disposition> <hex>           (not verified; validateFrames not Strict)
//   dropped <reason> [<SecTAG error>]
// `err` as for protect_static_frames. Returns true only if every frame was
// verified. Throws std::runtime_error on bad options or an unusable key file.
bool validate_static_frames(const StaticSaOptions& o, std::ostream& out, std::ostream& err);

}  // namespace layersec::macsec
