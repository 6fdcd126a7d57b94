// Raw DH over the DH-KEMs' key handling (raw_dh.h).
#include "layersec/kex/raw_dh.h"

#include <stdexcept>

#include "layersec/kex/kem_internal.h"

namespace layersec::kex {

RawDh::RawDh(KemScheme scheme) : scheme_(scheme) {
  if (scheme != KemScheme::kX25519 && scheme != KemScheme::kEcdhP256 && scheme != KemScheme::kEcdhP521)
    throw std::invalid_argument("RawDh: not a DH scheme");
  kem_ = detail::make_dh_kem(scheme);
}
RawDh::~RawDh() = default;
RawDh::RawDh(RawDh&&) noexcept = default;
RawDh& RawDh::operator=(RawDh&&) noexcept = default;

Result<std::vector<std::uint8_t>, KemError> RawDh::public_key(ByteSpan private_key) {
  auto key = kem_->load_private_key(private_key);
  if (!key) return Err(key.error());
  const ByteSpan pub = detail::dh_public(**key);
  return std::vector<std::uint8_t>(pub.begin(), pub.end());
}

Result<SecretBytes, KemError> RawDh::shared_secret(ByteSpan private_key, ByteSpan peer_public) {
  auto key = kem_->load_private_key(private_key);
  if (!key) return Err(key.error());
  return detail::dh_raw(*kem_, **key, peer_public);
}

}  // namespace layersec::kex
