#include "layersec/sv/publisher.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace layersec::sv {

Publisher::Publisher(const StreamConfig& config, const Profile& profile, TimePoint start)
    : config_(config), profile_(profile), start_(start), template_(config) {
  if (config.security.scheme != Scheme::kNone) {
    throw std::invalid_argument("sv: a secured stream needs a key");
  }
  init();
}

Publisher::Publisher(const StreamConfig& config, const Profile& profile, TimePoint start, KeyMaterial key)
    : config_(config), profile_(profile), start_(start), template_(config) {
  if (config.security.scheme == Scheme::kNone) {
    throw std::invalid_argument("sv: a key was given for an unsecured stream");
  }
  auto s = FrameSigner::create(config.security, std::move(key));
  if (!s) throw std::invalid_argument("sv: security configuration: " + std::string(to_string(s.error())));
  signer_.emplace(std::move(s).value());
  const auto& r = template_.regions();
  if (!signer_->write_extension(template_.mutable_bytes().subspan(r.extension_offset, signer_->layout().size))) {
    throw std::logic_error("sv: extension does not fit the template");
  }
  init();
}

void Publisher::init() {
  if (config_.asdus_per_frame != profile_.asdus_per_frame) {
    throw std::invalid_argument("sv: stream has " + std::to_string(config_.asdus_per_frame) +
                                " ASDUs per frame, profile " + std::string(profile_.name) + " needs " +
                                std::to_string(profile_.asdus_per_frame));
  }
  if (profile_.sample_rate_hz % profile_.asdus_per_frame != 0) {
    throw std::invalid_argument("sv: profile frame rate is not integral");
  }
  wrap_ = config_.smp_cnt_wrap != 0 ? config_.smp_cnt_wrap : profile_.smp_cnt_wrap();
  if (wrap_ > kMaxSmpCntWrap || wrap_ < config_.asdus_per_frame) {
    throw std::invalid_argument("sv: smpCnt wrap " + std::to_string(wrap_) + " outside " +
                                std::to_string(config_.asdus_per_frame) + ".." + std::to_string(kMaxSmpCntWrap) +
                                " (smpCnt is 16 bits and a frame's ASDUs need distinct values)");
  }
  for (std::size_t i = 0; i < config_.dataset.channel_count(); ++i) {
    channel_offsets_.push_back(config_.dataset.value_offset(i));
    channel_quality_.push_back(config_.dataset.channels()[i].has_quality);
  }
}

std::uint16_t Publisher::next_smp_cnt() const {
  return static_cast<std::uint16_t>((index_ * profile_.asdus_per_frame) % wrap_);
}

Result<ByteSpan, PublishError> Publisher::build_next(std::span<const Sample> samples, std::uint64_t refr_tm_utc) {
  const std::size_t channels = channel_offsets_.size();
  const std::size_t asdus = template_.asdu_count();
  if (samples.size() != asdus * channels) return Err(PublishError::kBadSamples);
  if (!pending_.empty() && next_deadline() >= pending_.front().at) {
    // Every key due by this frame's deadline; the latest one signs it.
    std::size_t due = 0;
    while (due < pending_.size() && next_deadline() >= pending_[due].at) ++due;
    auto st = signer_->rekey(std::move(pending_[due - 1].key));
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(due));
    if (!st) {
      ++counters_.sign_failures;
      last_security_error_ = st.error();
      return Err(PublishError::kSecurity);
    }
    ++counters_.rekeys;
  }
  std::uint32_t cnt = static_cast<std::uint32_t>((index_ * asdus) % wrap_);
  for (std::size_t a = 0; a < asdus; ++a) {
    template_.set_smp_cnt(a, static_cast<std::uint16_t>(cnt));
    if (++cnt == wrap_) cnt = 0;
    template_.set_refr_tm(a, refr_tm_utc);
    const Sample* s = samples.data() + a * channels;
    for (std::size_t c = 0; c < channels; ++c) template_.set_sample(a, channel_offsets_[c], s[c], channel_quality_[c]);
  }
  if (signer_) {
    auto st = signer_->sign(template_.mutable_bytes(), template_.regions());
    if (!st) {
      ++counters_.sign_failures;
      last_security_error_ = st.error();
      return Err(PublishError::kSecurity);
    }
  }
  ++index_;
  ++counters_.frames;
  return template_.bytes();
}

std::uint64_t Publisher::skip_to(TimePoint now) {
  if (now <= start_) return 0;
  // Index of the last frame whose deadline is not after `now`.
  const std::uint64_t fps = profile_.frames_per_second();
  const auto elapsed = static_cast<std::uint64_t>((now - start_).ns());
  std::uint64_t k = (elapsed / 1'000'000'000ULL) * fps + (elapsed % 1'000'000'000ULL) * fps / 1'000'000'000ULL;
  while (k > 0 && profile_.deadline(start_, k) > now) --k;  // integer rounding guard
  if (k <= index_) return 0;
  const std::uint64_t skipped = k - index_;
  index_ = k;
  counters_.skipped_frames += skipped;
  return skipped;
}

void Publisher::schedule_rekey(KeyMaterial key, TimePoint at) {
  if (!signer_) throw std::invalid_argument("sv: rekey on an unsecured stream");
  auto pos = pending_.begin();
  while (pos != pending_.end() && pos->at <= at) ++pos;
  pending_.insert(pos, PendingKey{std::move(key), at});
}

}  // namespace layersec::sv
