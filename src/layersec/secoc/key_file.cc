// load_key_file (declared in key_ring.h): the SecOC key file reader, in the
// secoc_io library.
#include "layersec/base/keyfile.h"
#include "layersec/secoc/key_ring.h"

namespace layersec::secoc {

Result<SecretBytes, KeyError> load_key_file(const std::string& path, std::size_t expected_size) {
  // base/keyfile.h does the checks (regular file, no symlink, owner, mode
  // 0600 or stricter, size) on the opened descriptor; SecOC key files are hex.
  auto key = layersec::load_key_file(path, {KeyFileFormat::kHex, expected_size});
  if (key) return std::move(*key);
  switch (key.error()) {
    case KeyFileError::kInsecureMode:
    case KeyFileError::kWrongOwner:
    case KeyFileError::kSymlink:
    case KeyFileError::kUnsafeDirectory:
      return Err(KeyError::kFileMode);
    case KeyFileError::kBadFormat:
    case KeyFileError::kWrongSize:
    case KeyFileError::kEmpty:
    case KeyFileError::kTooLarge:
      return Err(KeyError::kFileFormat);
    default:
      return Err(KeyError::kFileIo);
  }
}

}  // namespace layersec::secoc
