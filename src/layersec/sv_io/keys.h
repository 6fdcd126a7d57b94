// Keys of the SV tools: key files (hex text, base/keyfile.h) and the filter
// that keeps only new key updates from the KDC.
#pragma once

#include <cstdint>
#include <string>

#include "layersec/base/secret.h"
#include "layersec/sv/security.h"

namespace layersec::sv_io {

// Reads a key file (hex text, base/keyfile.h: refused unless only the owner
// can read it, mode 0600 or stricter, and not a symlink). Throws
// std::runtime_error "key file PATH: REASON"; never prints a key byte.
SecretBytes load_key_file(const std::string& path);

// `key` as key `key_id` (time_of_current_key 0, initial_counter 0).
sv::KeyMaterial key_material(SecretBytes key, std::uint32_t key_id);

// Key updates from a KDC arrive more than once (the current key again with
// every new session, rekeys on the same socket): only a key id above every
// one seen so far is taken.
class NewestKeyFilter {
 public:
  // `current`: the key id in use (0: none).
  explicit NewestKeyFilter(std::uint32_t current) : newest_(current) {}
  // True (and remembered) when `key_id` is newer than any seen.
  bool accept(std::uint32_t key_id) {
    if (key_id <= newest_) return false;
    newest_ = key_id;
    return true;
  }
  [[nodiscard]] std::uint32_t newest() const { return newest_; }

 private:
  std::uint32_t newest_;
};

}  // namespace layersec::sv_io
