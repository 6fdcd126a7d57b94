// Keys of one SecOC key group: at most two live keys, the current one (used
// to protect and tried first to verify) and, during a rollover window, the
// previous one (still accepted on receive until it expires or is retired).
// Each key carries a key id; SecOC has no key id on the wire, so a receiver
// finds the key by trying current, then previous. Contexts (EVP_MAC or
// AES-GCM) are built once when a key is installed.
//
// A key group may serve several PDUs; for a multicast PDU it is a group key.
// Group keys authenticate the group, not the member: any holder can forge
// traffic every other member accepts; rekey on leave removes a member.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/crypto/aead.h"
#include "layersec/crypto/mac.h"
#include "layersec/secoc/profile.h"

namespace layersec::secoc {

enum class KeyError : std::uint8_t {
  kBadLength,       // key size does not match the group's algorithm
  kDuplicateKeyId,  // the id is already live in this group
  kUnknownGroup,    // no such key group
  kCrypto,          // context creation failed
  kFileMode,        // key file readable by group or others (must be 0600)
  kFileIo,          // key file could not be read
  kFileFormat,      // key file is not hex of the right length
};
std::string_view to_string(KeyError e);

struct KeySlot {
  std::uint32_t key_id = 0;
  bool live = false;
  TimePoint expires = TimePoint::max();
  std::unique_ptr<crypto::Mac> mac;     // MAC algorithms
  std::optional<crypto::AesGcm> gcm;    // AES-GCM (non-standard profile)
};

class KeyGroup {
 public:
  KeyGroup(std::string name, AuthAlgorithm algorithm)
      : name_(std::move(name)), algorithm_(algorithm) {}

  // Makes `key` current. A previously current key becomes `previous` and
  // expires at now + rollover (an older previous key is dropped).
  [[nodiscard]] Status<KeyError> install(std::uint32_t key_id, const SecretBytes& key,
                                         TimePoint now, Duration rollover);
  // Drops the key with this id (current or previous). Returns false if absent.
  bool retire(std::uint32_t key_id);
  // Drops an expired previous key; returns its expiry if one remains.
  void expire(TimePoint now);

  [[nodiscard]] KeySlot& current() { return current_; }
  [[nodiscard]] KeySlot& previous() { return previous_; }
  [[nodiscard]] const KeySlot& current() const { return current_; }
  [[nodiscard]] const KeySlot& previous() const { return previous_; }
  [[nodiscard]] AuthAlgorithm algorithm() const { return algorithm_; }
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  std::string name_;
  AuthAlgorithm algorithm_;
  KeySlot current_;
  KeySlot previous_;
};

// Reads a key file through base/keyfile.h's load_key_file: hex text
// (whitespace and '#' comment lines ignored) of exactly `expected_size`
// bytes. Refuses symlinks, foreign owners and files whose mode grants any
// access to group or others (kFileMode). I/O adapter: defined in key_file.cc
// (library secoc_io).
[[nodiscard]] Result<SecretBytes, KeyError> load_key_file(const std::string& path,
                                                          std::size_t expected_size);

}  // namespace layersec::secoc
