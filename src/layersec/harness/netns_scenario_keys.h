// Key material of the netns scenario sweep (netns_scenarios.h): a PSK and a
// SAK per run, and a demo CA with RSA-2048 identities for the RSA rows,
// written once into the run's work directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace layersec::harness {

// Key material of a run, written once into a work dir. Index 0 of certs and
// keys is the publisher, index i the subscriber with spec index i - 1.
struct NetnsKeyFiles {
  std::string secoc_key;             // 32-byte CMAC-AES-256 PSK, raw, 0600
  std::string macsec_key;            // 16-byte GCM-AES-128 SAK, raw, 0600
  std::string ca_cert;               // PEM, "" until RSA material is made
  std::vector<std::string> certs;    // PEM certificates (0644)
  std::vector<std::string> keys;     // PEM private keys (0600)
};
// The SOME/IP service ids the RSA certificates authorise (the node's
// protected service and the key-management service).
[[nodiscard]] std::vector<std::uint16_t> netns_certificate_services();
// Writes fresh random PSK and SAK files into `dir`. Throws std::runtime_error
// (naming the file) when a file cannot be written.
[[nodiscard]] NetnsKeyFiles write_netns_psk_files(const std::string& dir);
// Creates a demo CA and RSA-2048 identities for the publisher and
// `subscribers` subscribers (key generation is provisioning, not measured)
// and saves them as PEM into `dir` (keys 0600). Throws std::runtime_error.
void write_netns_rsa_files(const std::string& dir, int subscribers, NetnsKeyFiles& files);

}  // namespace layersec::harness
