#include "layersec/sv/stream.h"

#include <stdexcept>

namespace layersec::sv {

namespace {
ByteSpan text_bytes(const std::string& s) {
  return ByteSpan(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}
}  // namespace

FrameTemplate::FrameTemplate(const StreamConfig& c) {
  if (c.asdus_per_frame == 0 || c.asdus_per_frame > kMaxAsdus) {
    throw std::invalid_argument("sv: asdus_per_frame must be 1.." + std::to_string(kMaxAsdus));
  }
  if (c.sv_id.empty() || c.sv_id.size() > kMaxIdentifierBytes) {
    throw std::invalid_argument("sv: svID must have 1..129 characters");
  }
  if (c.security.scheme != Scheme::kNone && tag_bytes_for(c.security) == 0) {
    throw std::invalid_argument("sv: tag length not allowed for " + std::string(to_string(c.security.scheme)));
  }
  seq_data_size_ = c.dataset.encoded_size();
  asdu_count_ = c.asdus_per_frame;

  const std::vector<std::uint8_t> zeros(seq_data_size_, 0);
  const std::array<std::uint8_t, 8> zero8{};
  std::vector<std::uint8_t> ext(extension_size(c.security), 0);
  // Only the extension's size matters here; the Publisher's FrameSigner
  // writes its fields into the template afterwards.
  Frame f;
  f.eth = c.eth;
  f.appid = c.appid;
  f.reserved1 = c.simulate ? kReserved1Simulate : 0;
  f.no_asdu = static_cast<std::uint16_t>(c.asdus_per_frame);
  for (std::size_t i = 0; i < c.asdus_per_frame; ++i) {
    Asdu& a = f.asdus[i];
    a.sv_id = text_bytes(c.sv_id);
    if (c.dat_set && !c.dat_set->empty()) {
      a.dat_set = text_bytes(*c.dat_set);
      a.has_dat_set = true;
    }
    a.conf_rev = c.conf_rev;
    a.has_refr_tm = c.refr_tm;
    if (c.refr_tm) a.refr_tm = zero8;
    a.smp_synch = c.smp_synch;
    a.has_smp_rate = c.smp_rate.has_value();
    a.smp_rate = c.smp_rate.value_or(0);
    a.seq_data = zeros;
    a.has_smp_mod = c.smp_mod.has_value();
    a.smp_mod = c.smp_mod.value_or(0);
    a.has_gm_identity = c.gm_identity.has_value();
    if (c.gm_identity) a.gm_identity = *c.gm_identity;
  }
  f.extension = ext;
  bytes_.resize(encoded_size(f));
  auto n = encode_frame(f, bytes_);
  if (!n) throw std::invalid_argument("sv: stream cannot be encoded: " + std::string(to_string(n.error())));

  // Read the offsets back from our own encoding (one source of truth: the
  // decoder). The frame decoder checks the extension's length and header CRC
  // but not its contents, so the all-zero placeholder decodes.
  auto d = decode_frame(bytes_);
  if (!d) throw std::logic_error("sv: template does not decode: " + std::string(to_string(d.error())));
  for (std::size_t i = 0; i < asdu_count_; ++i) {
    asdus_[i].smp_cnt = d->asdus[i].smp_cnt_offset;
    asdus_[i].seq_data = d->asdus[i].seq_data_offset;
    asdus_[i].refr_tm = d->asdus[i].has_refr_tm
                            ? static_cast<std::size_t>(d->asdus[i].refr_tm.data() - bytes_.data())
                            : 0;
  }
  regions_ = regions_of(*d);
}

}  // namespace layersec::sv
