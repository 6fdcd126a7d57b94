// Sample datasets carried in the ASDU 'sample data' field (IEC 61850-9-2
// §8.4, UCA 9-2LE §6 / IEC 61869-9 §6.9.3): a fixed sequence of channels, each
// a 32-bit value followed, for measured values, by a 32-bit quality
// (IEC 61850-7-3 Quality, encoded in the 9-2 fixed-length form).
//
// The 4I+4U dataset of 9-2LE and IEC 61869-9 (PhsMeas1) is eight INT32
// channels IA, IB, IC, IN, VA, VB, VC, VN, each value + quality = 64 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"

namespace layersec::sv {

enum class ValueType : std::uint8_t {
  kInt32,    // INT32 (2's complement, big-endian); 9-2LE: current in mA, voltage in 10 mV
  kUint32,   // INT32U
  kFloat32,  // FLOAT32 (IEEE 754, big-endian)
};

struct Channel {
  std::string name;
  ValueType type = ValueType::kInt32;
  bool has_quality = true;  // a 32-bit quality follows the value
};

// One sample of one channel. The value is carried as raw 32 bits; use
// float_value()/set_float() for FLOAT32 channels.
struct Sample {
  std::int32_t value = 0;
  std::uint32_t quality = 0;
};

// Quality bits (IEC 61850-7-3 §6.2 in the 9-2 fixed encoding, bit 0 = LSB).
namespace quality {
inline constexpr std::uint32_t kValidityMask = 0x3;  // 00 good, 01 invalid, 11 questionable
inline constexpr std::uint32_t kInvalid = 0x1;
inline constexpr std::uint32_t kQuestionable = 0x3;
inline constexpr std::uint32_t kTest = 1u << 11;
inline constexpr std::uint32_t kDerived = 1u << 13;
}  // namespace quality

// A dataset layout: channel list, fixed at configuration time.
class Dataset {
 public:
  Dataset() = default;
  explicit Dataset(std::vector<Channel> channels);

  // The 9-2LE / 61869-9 4I+4U dataset: 8 x (INT32 value + quality), 64 bytes.
  static Dataset four_i_four_u();
  // n INT32 channels with quality (a configurable dataset of the same shape).
  static Dataset int32_with_quality(std::size_t n);

  [[nodiscard]] const std::vector<Channel>& channels() const { return channels_; }
  [[nodiscard]] std::size_t channel_count() const { return channels_.size(); }
  // Bytes of one ASDU's sample data.
  [[nodiscard]] std::size_t encoded_size() const { return size_; }
  // Byte offset of channel i's value within the sample data.
  [[nodiscard]] std::size_t value_offset(std::size_t i) const { return offsets_[i]; }

  // Writes samples (one per channel) into out (encoded_size() bytes). Returns
  // false on a size mismatch.
  [[nodiscard]] bool encode(std::span<const Sample> samples, MutableByteSpan out) const;
  // Reads one ASDU's sample data. Returns false if seq_data.size() is not
  // encoded_size() or out is too small.
  [[nodiscard]] bool decode(ByteSpan seq_data, std::span<Sample> out) const;

 private:
  std::vector<Channel> channels_;
  std::vector<std::size_t> offsets_;
  std::size_t size_ = 0;
};

float float_value(const Sample& s);
void set_float(Sample& s, float v);

}  // namespace layersec::sv
