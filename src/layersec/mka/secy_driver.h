// What MKA needs from a SecY (IEEE 802.1X-2020 §12.5 and Figure 12-3, the
// KaY -> SecY interface; 802.1AE-2018 §10.7.12-10.7.22 for the SC/SA
// management it maps to), and the plain values that cross it: cipher suites,
// key identifiers, the XPN salt and SSCI.
//
// The participant (participant.h) calls a SecYDriver synchronously, in the
// make-before-break order of sak_lifecycle.h, and reads transmit PNs from it.
// Our macsec::SecY implements it through secy_adapter.h; tests use the
// recording double in fake_secy_test_support.h. The driver never sees a
// key it may log: SaMaterial carries the SAK by reference for the call only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/macsec/cipher_suite.h"
#include "layersec/mka/mkpdu.h"

namespace layersec::mka {

// The MACsec cipher suites (802.1AE-2018 Table 14-1) are macsec's:
// to_string, cipher_suite_from_string, cipher_suite_id, sak_size, is_xpn and
// max_pn come from macsec/cipher_suite.h (found by argument-dependent
// lookup); mkpdu.h maps a Distributed SAK's identifier back
// (cipher_suite_from_id, the 802.1X-2010 misprint included).
using CipherSuite = macsec::CipherSuite;

// Key Identifier (802.1X-2020 §9.8): the MI of the key server that made the
// SAK and the Key Number it gave it. KN 0 names no key.
struct KeyIdentifier {
  MemberId mi{};
  std::uint32_t kn = 0;
  [[nodiscard]] bool empty() const { return kn == 0; }
  bool operator==(const KeyIdentifier&) const = default;
};

// Confidentiality Offset as the Distributed SAK carries it (§11.11.1,
// Figure 11-11 octet 2): integrity only, or confidentiality from offset
// 0, 30 or 50 octets of the User Data.
enum class ConfidentialityOffset : std::uint8_t {
  kIntegrityOnly = 0,
  kOffset0 = 1,
  kOffset30 = 2,
  kOffset50 = 3,
};
// The offset in octets (0 for integrity only and for offset 0).
std::uint8_t offset_octets(ConfidentialityOffset o);

using Salt = macsec::Salt;  // 96 bits

// XPN salt of a SAK (802.1X-2020 §9.8.1, as Technica's MKAdaemon reads it):
// the key server's 96-bit MI with its first four octets XORed with the KN,
// octet order KN[2], KN[3], KN[0], KN[1] (KN big-endian, KN[0] the most
// significant octet). Depends only on the KI, so every member derives the
// same salt for a distributed SAK.
Salt xpn_salt(const KeyIdentifier& ki);

// Short SCI (802.1AE-2018 §10.7.13, §14.7) of `sci` among the SCIs of every
// participant that holds the SAK (ours included): its position, counted
// from 1, in descending numerical order of SCI (the numerically greatest
// SCI gets 1, as MKAdaemon assigns it). 0 when `sci` is not in `scis`.
std::uint32_t ssci_of(std::uint64_t sci, std::span<const std::uint64_t> scis);

// One SA's key material for the duration of one driver call. `sak` is
// borrowed: the driver builds its cipher context from it and keeps no
// reference (it may copy the bytes into its own zeroizing storage).
struct SaMaterial {
  const SecretBytes* sak = nullptr;
  CipherSuite suite = CipherSuite::kGcmAes128;
  KeyIdentifier ki{};
  std::uint8_t an = 0;
  ConfidentialityOffset offset = ConfidentialityOffset::kOffset0;
  std::uint32_t ssci = 0;  // XPN: the transmitter's SSCI (ours for TX, the peer's for RX)
  Salt salt{};             // XPN: xpn_salt(ki)
};

// Why a driver call failed.
enum class SecYError : std::uint8_t {
  kRefused,     // the SecY refused the SA (suite/offset it cannot do, an SA it will not replace)
  kBadKey,      // SAK length does not match the suite
  kNoSuchSa,    // enable_tx_sa on an AN with no transmit SA
  kBackend,     // cipher context or hardware failure
};
std::string_view to_string(SecYError e);

// The SecY as the KaY drives it. Calls are synchronous; a failed call
// changes nothing in the SecY. One SecY per participant (one per CA).
class SecYDriver {
 public:
  virtual ~SecYDriver() = default;
  // Installs (or replaces) receive SA `m.an` of the receive SC `peer_sci`,
  // creating the SC when it does not exist, enabled, accepting PNs from
  // `lowest_pn` (>= 1) on.
  [[nodiscard]] virtual Status<SecYError> install_rx_sa(std::uint64_t peer_sci, const SaMaterial& m,
                                                        std::uint64_t lowest_pn) = 0;
  // Installs transmit SA `m.an` with next PN `next_pn` (>= 1). Nothing is
  // sent on it until enable_tx_sa(m.an).
  [[nodiscard]] virtual Status<SecYError> install_tx_sa(const SaMaterial& m, std::uint64_t next_pn) = 0;
  // Makes transmit SA `an` the encoding SA: every frame from now on.
  [[nodiscard]] virtual Status<SecYError> enable_tx_sa(std::uint8_t an) = 0;
  // Removes receive SA `an` of SC `peer_sci` (nothing when absent).
  virtual void retire_rx_sa(std::uint64_t peer_sci, std::uint8_t an) = 0;
  // Removes transmit SA `an` (nothing when absent). The participant removes
  // the encoding SA only when the CA is gone (no live peer, or stop()):
  // nothing protected is sent then until the next enable_tx_sa().
  virtual void retire_tx_sa(std::uint8_t an) = 0;
  // Removes the receive SC `peer_sci` and its SAs (nothing when absent).
  virtual void remove_rx_sc(std::uint64_t peer_sci) = 0;
  // Next PN of transmit SA `an`; 0 when there is none.
  [[nodiscard]] virtual std::uint64_t tx_next_pn(std::uint8_t an) const = 0;
  // The lowest PN receive SA `an` of `peer_sci` still accepts in order
  // (the highest PN it accepted + 1, or the install PN); 0 when there is
  // none. The participant re-installs an SA with it so that a peer that
  // leaves and returns cannot reopen a replay window.
  [[nodiscard]] virtual std::uint64_t rx_next_pn(std::uint64_t peer_sci, std::uint8_t an) const = 0;
};

// Source of the MI and of the key server's nonces (§9.4.2, §9.8.1).
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // Fills `out` with random octets; false on failure (nothing is used then).
  [[nodiscard]] virtual bool fill(MutableByteSpan out) = 0;
};

// OpenSSL's DRBG (crypto::random_bytes).
class SystemRandom final : public RandomSource {
 public:
  [[nodiscard]] bool fill(MutableByteSpan out) override;
};

}  // namespace layersec::mka
