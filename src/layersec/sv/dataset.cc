#include "layersec/sv/dataset.h"

#include <bit>
#include <utility>

namespace layersec::sv {

Dataset::Dataset(std::vector<Channel> channels) : channels_(std::move(channels)) {
  offsets_.reserve(channels_.size());
  for (const auto& c : channels_) {
    offsets_.push_back(size_);
    size_ += 4 + (c.has_quality ? 4 : 0);
  }
}

Dataset Dataset::four_i_four_u() {
  std::vector<Channel> ch;
  for (const char* n : {"IA", "IB", "IC", "IN", "VA", "VB", "VC", "VN"}) {
    ch.push_back(Channel{n, ValueType::kInt32, true});
  }
  return Dataset(std::move(ch));
}

Dataset Dataset::int32_with_quality(std::size_t n) {
  std::vector<Channel> ch;
  for (std::size_t i = 0; i < n; ++i) ch.push_back(Channel{"CH" + std::to_string(i), ValueType::kInt32, true});
  return Dataset(std::move(ch));
}

bool Dataset::encode(std::span<const Sample> samples, MutableByteSpan out) const {
  if (samples.size() != channels_.size() || out.size() != size_) return false;
  std::uint8_t* p = out.data();
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    store_be32(p, static_cast<std::uint32_t>(samples[i].value));
    p += 4;
    if (channels_[i].has_quality) {
      store_be32(p, samples[i].quality);
      p += 4;
    }
  }
  return true;
}

bool Dataset::decode(ByteSpan seq_data, std::span<Sample> out) const {
  if (seq_data.size() != size_ || out.size() < channels_.size()) return false;
  ByteReader r(seq_data);
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    out[i].value = static_cast<std::int32_t>(r.u32());
    out[i].quality = channels_[i].has_quality ? r.u32() : 0;
  }
  return r.finish();
}

float float_value(const Sample& s) { return std::bit_cast<float>(s.value); }
void set_float(Sample& s, float v) { s.value = std::bit_cast<std::int32_t>(v); }

}  // namespace layersec::sv
