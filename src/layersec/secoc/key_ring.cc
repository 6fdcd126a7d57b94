#include "layersec/secoc/key_ring.h"


namespace layersec::secoc {

std::string_view to_string(KeyError e) {
  switch (e) {
    case KeyError::kBadLength: return "bad key length";
    case KeyError::kDuplicateKeyId: return "key id already live";
    case KeyError::kUnknownGroup: return "unknown key group";
    case KeyError::kCrypto: return "crypto context creation failed";
    case KeyError::kFileMode: return "key file mode must be 0600 (no group/other access)";
    case KeyError::kFileIo: return "key file unreadable";
    case KeyError::kFileFormat: return "key file is not hex of the expected length";
  }
  return "unknown";
}

Status<KeyError> KeyGroup::install(std::uint32_t key_id, const SecretBytes& key, TimePoint now,
                                   Duration rollover) {
  if (key.size() != key_size(algorithm_)) return Err(KeyError::kBadLength);
  if ((current_.live && current_.key_id == key_id) || (previous_.live && previous_.key_id == key_id))
    return Err(KeyError::kDuplicateKeyId);
  KeySlot fresh;
  fresh.key_id = key_id;
  if (is_aead(algorithm_)) {
    auto g = crypto::AesGcm::create(key.span());
    if (!g) return Err(KeyError::kCrypto);
    fresh.gcm.emplace(std::move(g).value());
  } else {
    auto m = crypto::make_mac(mac_algorithm(algorithm_), key.span());
    if (!m) return Err(KeyError::kCrypto);
    fresh.mac = std::move(m).value();
  }
  fresh.live = true;
  if (current_.live) {
    previous_ = std::move(current_);
    previous_.expires = now + rollover;
  }
  current_ = std::move(fresh);
  return {};
}

bool KeyGroup::retire(std::uint32_t key_id) {
  if (previous_.live && previous_.key_id == key_id) {
    previous_ = KeySlot{};
    return true;
  }
  if (current_.live && current_.key_id == key_id) {
    current_ = std::move(previous_);
    current_.expires = TimePoint::max();
    previous_ = KeySlot{};
    return true;
  }
  return false;
}

void KeyGroup::expire(TimePoint now) {
  if (previous_.live && previous_.expires <= now) previous_ = KeySlot{};
}


}  // namespace layersec::secoc
