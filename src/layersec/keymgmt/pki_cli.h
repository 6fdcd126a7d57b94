// What `layersec keys` needs around kex/pki.h: parsing its arguments
// (service ids, names, validity), the directories it writes into, the
// messages it refuses with, and the certificate summary it prints. Argument
// errors throw PkiUsageError (the command exits 2 with its message).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "layersec/base/keyfile.h"
#include "layersec/kex/pki.h"

namespace layersec::keymgmt {

// A usage error in a `layersec keys` argument; what() is the message.
struct PkiUsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "0x1234" (hex) or decimal, 0..0xffff; throws PkiUsageError.
[[nodiscard]] std::uint16_t parse_service_id(const std::string& text);
// "0x1234,0x5678" (empty items skipped); at least one id; throws PkiUsageError.
[[nodiscard]] std::vector<std::uint16_t> parse_service_ids(const std::string& list);
// --name is the subject CN and the file stem: a valid CN (RFC 5280, at most
// 64 characters), no '/', not "." or ".."; throws PkiUsageError.
void check_name(const std::string& name);
// N days from `now` (Unix seconds); throws PkiUsageError (naming --days) past
// 9999-12-31T23:59:59Z, the latest time X.509 can encode.
[[nodiscard]] kex::Validity days_validity(std::int64_t now, int days);

// --kind of a CA: "vehicle" or "substation"; throws PkiUsageError.
[[nodiscard]] kex::CaKind parse_ca_kind(const std::string& kind);
// --alg of a CA: "p256" or "ed25519"; throws PkiUsageError.
[[nodiscard]] kex::KeyAlgorithm parse_ca_algorithm(const std::string& alg);
// Issue validity: [not_before, not_after] if either is given (both must be,
// not_after later), else days_validity(now, days); throws PkiUsageError.
[[nodiscard]] kex::Validity issue_validity(std::int64_t not_before, std::int64_t not_after, int days,
                                           std::int64_t now);

// mkdir -p with mode 0700 for every directory created; an existing
// directory is kept. Throws PkiUsageError ("DIR is not a directory",
// "cannot create PREFIX").
void ensure_dir(const std::string& dir);
// True if `path` is (or resolves to) a directory.
[[nodiscard]] bool is_dir(const std::string& path);
// "DIR/NAME" -> (DIR, NAME); "NAME" -> (".", NAME).
[[nodiscard]] std::pair<std::string, std::string> split_stem(const std::string& stem);

// "WHAT: <PkiError>", and for a key file refusal " (<KeyFileError>: why)",
// where why re-checks `key_path` (if given) for which directory is unsafe or
// the mode found; nothing is read from it.
[[nodiscard]] std::string pki_message(kex::PkiError e, KeyFileError detail, const std::string& what,
                                      const std::string& key_path = {});
// A certificate file, or nullopt and in *why the refusal naming `option`, the path and why.
[[nodiscard]] std::optional<kex::Certificate> load_cert(const std::string& option, const std::string& path,
                                                        std::string* why);

// `--ca DIR|FILE` (DIR means DIR/ca.pem) as a one-anchor trust store, or
// nullopt and in *why the refusal ("--ca: ..." if unreadable, "ANCHOR: <PkiError>" if unusable).
[[nodiscard]] std::optional<kex::TrustStore> load_trust(const std::string& ca, std::string* why);

// `layersec keys verify`: what to check.
struct VerifyRequest {
  std::string ca, cert;  // CA directory or certificate; node certificate
  std::string service;   // if not empty: a service id the node must be authorised for
  std::string key;       // if not empty: a key file (0600 check) that must match the certificate
};
// Checks chain, validity at `now` (Unix seconds) and purpose, then the
// service and the key as asked. True with the "OK CN[ authorised for
// 0x....]" line in *message, or false with the refusal naming the file and why. A bad service id throws PkiUsageError
// (after the certificate checks, as the command reports them in that order).
[[nodiscard]] bool verify_node(const VerifyRequest& r, std::int64_t now, std::string* message);

// Unix seconds as "YYYY-MM-DDTHH:MM:SSZ" (UTC).
[[nodiscard]] std::string iso_time(std::int64_t t);
// "0x1234".
[[nodiscard]] std::string service_hex(std::uint16_t s);
// Comma-separated "0x...." ids.
[[nodiscard]] std::string service_list(const std::vector<std::uint16_t>& services);
// The `keys show` summary: subject, issuer, serial, validity, CA flag, key
// algorithm and usage, services ("(none)" without the extension) and the
// SHA-256 fingerprint, one "name:   value" line each. Never a key.
[[nodiscard]] std::string format_certificate_info(const kex::CertificateInfo& info);

}  // namespace layersec::keymgmt
