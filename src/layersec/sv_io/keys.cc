#include "layersec/sv_io/keys.h"

#include <stdexcept>
#include <utility>

#include "layersec/base/keyfile.h"

namespace layersec::sv_io {

SecretBytes load_key_file(const std::string& path) {
  auto key = layersec::load_key_file(path);  // base/keyfile.h: 0600 owner-only, hex
  if (!key) throw std::runtime_error("key file " + path + ": " + std::string(to_string(key.error())));
  return std::move(key).value();
}

sv::KeyMaterial key_material(SecretBytes key, std::uint32_t key_id) {
  sv::KeyMaterial k;
  k.key_id = key_id;
  k.key = std::move(key);
  k.time_of_current_key = 0;
  return k;
}

}  // namespace layersec::sv_io
