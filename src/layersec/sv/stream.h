// A publisher's stream configuration and its pre-encoded frame (the fast path).
//
// FrameTemplate encodes the stream's frame once with encode_frame() and
// records where every per-frame field lives (an offset table, as open62541's
// PubSub does for fixed-layout messages). Per frame only smpCnt, refrTm, the
// sample values and the security extension are patched in place; nothing is
// re-encoded and nothing is allocated.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/sv/dataset.h"
#include "layersec/sv/frame.h"
#include "layersec/sv/security.h"

namespace layersec::sv {

// Static description of one SV stream (one svID, one dataset).
struct StreamConfig {
  EthernetHeader eth{{0x01, 0x0C, 0xCD, 0x04, 0x00, 0x01}, {0x02, 0x00, 0x00, 0x00, 0x00, 0x01}, true, 4,
                     false, 0};
  std::uint16_t appid = 0x4000;
  bool simulate = false;
  std::string sv_id = "LAYERSEC01";
  std::optional<std::string> dat_set;  // omitted when empty (9-2LE omits it)
  std::uint32_t conf_rev = 1;
  std::uint8_t smp_synch = 2;  // 2 = globally synchronised
  std::optional<std::uint16_t> smp_rate;
  bool refr_tm = false;        // include refrTm in every ASDU
  std::optional<std::uint16_t> smp_mod;
  std::optional<std::array<std::uint8_t, 8>> gm_identity;
  std::size_t asdus_per_frame = 1;
  // smpCnt wraps here (1..65536, at least asdus_per_frame); 0 takes the
  // profile's default (Profile::smp_cnt_wrap()).
  std::uint32_t smp_cnt_wrap = 0;
  Dataset dataset = Dataset::four_i_four_u();
  SecurityConfig security;
};

// Offsets of one ASDU's variable fields in the template.
struct AsduOffsets {
  std::size_t smp_cnt = 0;
  std::size_t refr_tm = 0;  // 0 when absent
  std::size_t seq_data = 0;
};

class FrameTemplate {
 public:
  // Encodes the frame; throws std::invalid_argument on a configuration that
  // cannot be encoded (start-up error, not a packet-path error).
  explicit FrameTemplate(const StreamConfig& config);

  [[nodiscard]] std::size_t size() const { return bytes_.size(); }
  [[nodiscard]] ByteSpan bytes() const { return bytes_; }
  [[nodiscard]] MutableByteSpan mutable_bytes() { return bytes_; }
  [[nodiscard]] std::size_t asdu_count() const { return asdu_count_; }
  [[nodiscard]] const AsduOffsets& asdu(std::size_t i) const { return asdus_[i]; }
  [[nodiscard]] const AuthRegions& regions() const { return regions_; }
  [[nodiscard]] std::size_t seq_data_size() const { return seq_data_size_; }

  void set_smp_cnt(std::size_t asdu, std::uint16_t v) { store_be16(bytes_.data() + asdus_[asdu].smp_cnt, v); }
  // refrTm as IEC 61850 UtcTime (seconds, 24-bit fraction, quality); no-op when absent.
  void set_refr_tm(std::size_t asdu, std::uint64_t utc_time) {
    if (asdus_[asdu].refr_tm != 0) store_be64(bytes_.data() + asdus_[asdu].refr_tm, utc_time);
  }
  [[nodiscard]] MutableByteSpan seq_data(std::size_t asdu) {
    return MutableByteSpan(bytes_.data() + asdus_[asdu].seq_data, seq_data_size_);
  }
  // Writes one channel value + quality of one ASDU (no bounds checks beyond
  // the dataset's own offsets; channel < dataset.channel_count()).
  void set_sample(std::size_t asdu, std::size_t channel_offset, const Sample& s, bool has_quality) {
    std::uint8_t* p = bytes_.data() + asdus_[asdu].seq_data + channel_offset;
    store_be32(p, static_cast<std::uint32_t>(s.value));
    if (has_quality) store_be32(p + 4, s.quality);
  }

 private:
  std::vector<std::uint8_t> bytes_;
  std::array<AsduOffsets, kMaxAsdus> asdus_{};
  std::size_t asdu_count_ = 0;
  std::size_t seq_data_size_ = 0;
  AuthRegions regions_;
};

}  // namespace layersec::sv
