// Chaskey MAC (Mouha et al., SAC 2014, ePrint 2014/386) with 8 rounds, and
// Chaskey-12 (ISO/IEC 29192-6:2019) with 12 rounds. 128-bit key, 128-bit
// state, tags of 1..16 bytes (the leading bytes of the final state, in the
// reference code's little-endian memory order).
//
// Written here because no packaged library provides it (see
// docs/architecture.md). Validated against the reference vectors in
// ../shared/vectors/chaskey and cross-checked against the reference C code.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/crypto/mac.h"

namespace layersec::crypto {

class Chaskey final : public Mac {
 public:
  // rounds: 8 (Chaskey) or 12 (Chaskey-12). key: 16 bytes.
  static Result<std::unique_ptr<Chaskey>, CryptoError> create(ByteSpan key, int rounds);
  Chaskey(const std::array<std::uint32_t, 4>& key, int rounds);
  ~Chaskey() override;

  [[nodiscard]] MacAlgorithm algorithm() const override {
    return rounds_ == 12 ? MacAlgorithm::kChaskey12 : MacAlgorithm::kChaskey8;
  }
  [[nodiscard]] std::size_t tag_size() const override { return 16; }

  void begin() override;
  void update(ByteSpan data) override;
  Status<CryptoError> finish(MutableByteSpan out) override;

  // One-shot fast path (no virtual calls): tag of out.size() (1..16) bytes.
  void mac(ByteSpan message, MutableByteSpan out) const;

 private:
  std::array<std::uint32_t, 4> k_{}, k1_{}, k2_{};
  std::array<std::uint32_t, 4> v_{};
  std::array<std::uint8_t, 16> buf_{};
  std::size_t buf_len_ = 0;
  bool have_block_ = false;  // buf_ holds a full block not yet absorbed
  int rounds_ = 12;
};

}  // namespace layersec::crypto
