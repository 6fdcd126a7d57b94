#include "layersec/secoc/key_ring.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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

Result<SecretBytes, KeyError> load_key_file(const std::string& path, std::size_t expected_size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Err(KeyError::kFileIo);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Err(KeyError::kFileIo);
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    return Err(KeyError::kFileMode);
  }
  SecretBytes text(4096);
  std::size_t len = 0;
  for (;;) {
    if (len == text.size()) {
      ::close(fd);
      return Err(KeyError::kFileFormat);
    }
    const ssize_t n = ::read(fd, text.data() + len, text.size() - len);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return Err(KeyError::kFileIo);
    }
    if (n == 0) break;
    len += static_cast<std::size_t>(n);
  }
  ::close(fd);
  SecretBytes key(expected_size);
  std::size_t nibbles = 0;
  for (std::size_t i = 0; i < len; ++i) {
    const char c = static_cast<char>(text[i]);
    int v = -1;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    else return Err(KeyError::kFileFormat);
    if (nibbles / 2 >= expected_size) return Err(KeyError::kFileFormat);
    key[nibbles / 2] = static_cast<std::uint8_t>((nibbles % 2) ? (key[nibbles / 2] | v)
                                                               : (v << 4));
    ++nibbles;
  }
  if (nibbles != 2 * expected_size) return Err(KeyError::kFileFormat);
  return key;
}

}  // namespace layersec::secoc
