// The SV channel of the restart and recovery runners (restart_channel.h): an
// sv::Publisher and an sv::Subscriber on one stream at the IEC 61869-9
// profile 4800/2, HMAC-SHA256 (IEC 62351-6). SV persists no state: the
// publisher's frameCounter starts at the (simulated) wall-clock time in ns at
// every start, as `sv publish` does (sv_io publisher_counter_base(), docs/sv.md
// "Freshness across restarts"), and the subscriber's counter floor lives as
// long as the object.
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "layersec/attack/restart_channel.h"
#include "layersec/base/bytes.h"
#include "layersec/base/secret.h"
#include "layersec/sv/dataset.h"
#include "layersec/sv/frame.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/security.h"
#include "layersec/sv/subscriber.h"

namespace layersec::attack::detail {
namespace {

constexpr std::int64_t kEpochNs = 1'780'000'000LL * 1'000'000'000LL;
constexpr std::uint32_t kKeyId = 0x5200;

std::string reason_name(const sv::StreamCounters& before, const sv::StreamCounters& c, sv::DropReason r) {
  if (r == sv::DropReason::kSecurity) {
    if (c.bad_tag != before.bad_tag) return "bad_tag";
    if (c.unknown_key != before.unknown_key) return "unknown_key";
    if (c.replayed_counter != before.replayed_counter) return "replayed_counter";
    return "bad_extension";
  }
  std::string s(sv::to_string(r));
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
}

class SvChannel final : public Channel {
 public:
  explicit SvChannel(std::uint64_t seed) : seed_(seed), now_(TimePoint::from_ns(kEpochNs)) {
    auto p = sv::find_profile("4800/2");
    auto sec = sv::parse_scheme("hmac-sha256");
    if (!p || !sec) throw std::runtime_error("restart attack: SV profile or scheme missing");
    profile_ = *p;
    stream_.asdus_per_frame = profile_.asdus_per_frame;
    stream_.security = *sec;
    sub_cfg_.asdus_per_frame = profile_.asdus_per_frame;
    sub_cfg_.smp_cnt_wrap = profile_.smp_cnt_wrap();
    sub_cfg_.sv_id = stream_.sv_id;
    sub_cfg_.security = *sec;
    sub_cfg_.timeout = Duration::milliseconds(10);
    samples_.resize(profile_.asdus_per_frame * stream_.dataset.channel_count());
    info_.layer = "sv";
    info_.configuration = "sv-62351-hmac-sha256";
    info_.unit = "frameCounter";
    info_.window = 0;  // a secured stream accepts only a counter above its floor
    info_.interval = Duration::nanoseconds(static_cast<std::int64_t>(profile_.interarrival_us() * 1000.0));
    info_.description = "SV 4800/2, HMAC-SHA256-256, frameCounter from the wall clock at start";
  }

  const ChannelInfo& info() const override { return info_; }

  std::optional<std::string> start_sender(bool) override {
    pub_.emplace(stream_, profile_, now_, key(static_cast<std::uint64_t>(now_.ns())));
    return std::nullopt;
  }
  std::optional<std::string> start_receiver(bool) override {
    sub_.emplace();
    sub_->add_stream(sub_cfg_, key(0));
    return std::nullopt;
  }
  void kill_sender() override { pub_.reset(); }
  void kill_receiver() override { sub_.reset(); }
  bool sender_up() const override { return pub_.has_value(); }
  bool receiver_up() const override { return sub_.has_value(); }
  std::string sender_state_path() const override { return {}; }
  std::string receiver_state_path() const override { return {}; }

  std::vector<Wire> emit() override {
    std::vector<Wire> out;
    if (!pub_) {
      now_ += info_.interval;
      return out;
    }
    now_ = pub_->next_deadline();
    Wire w;
    w.seq = ++seq_;
    w.sent = now_;
    for (auto& s : samples_) s = sv::Sample{static_cast<std::int32_t>(mix64(seed_ + w.seq) & 0xFFFF), 0};
    samples_[0].value = static_cast<std::int32_t>(static_cast<std::uint32_t>(w.seq));
    samples_[1].value = static_cast<std::int32_t>(static_cast<std::uint32_t>(w.seq >> 32));
    w.fv = {pub_->signer() ? pub_->signer()->next_counter() : 0, 0, 0};
    auto f = pub_->build_next(samples_);
    if (!f) {
      ++refusals_;
      return out;
    }
    w.bytes.assign(f->begin(), f->end());
    out.push_back(std::move(w));
    return out;
  }

  void idle(Duration d) override {
    now_ += d;
    if (pub_) (void)pub_->skip_to(now_);
  }

  Verdict deliver(const Wire& w) override {
    Verdict v;
    if (!sub_) {
      v.reason = "receiver_down";
      return v;
    }
    const sv::StreamCounters before = sub_->counters(0);
    auto r = sub_->on_frame(w.bytes, now_);
    if (!r) {
      v.reason = reason_name(before, sub_->counters(0), r.error());
      return v;
    }
    v.delivered = true;
    const sv::Frame& f = *r->frame;
    if (f.no_asdu > 0 && f.asdus[0].seq_data.size() >= 16) {
      const std::uint8_t* d = f.asdus[0].seq_data.data();
      v.seq = static_cast<std::uint64_t>(load_be32(d)) | (static_cast<std::uint64_t>(load_be32(d + 8)) << 32);
    }
    return v;
  }

  TimePoint now() const override { return now_; }
  std::uint64_t send_refusals() const override { return refusals_; }

 private:
  sv::KeyMaterial key(std::uint64_t initial_counter) const {
    sv::KeyMaterial k;
    k.key_id = kKeyId;
    const std::size_t n = sv::key_bytes_for(stream_.security.scheme);
    k.key = SecretBytes(n);
    for (std::size_t i = 0; i < n; ++i) k.key[i] = static_cast<std::uint8_t>(mix64(seed_ * 977 + i));
    k.time_of_current_key = 1780000000;
    k.initial_counter = initial_counter;
    return k;
  }

  std::uint64_t seed_;
  ChannelInfo info_;
  sv::Profile profile_{};
  sv::StreamConfig stream_;
  sv::SubscriptionConfig sub_cfg_;
  std::optional<sv::Publisher> pub_;
  std::optional<sv::Subscriber> sub_;
  std::vector<sv::Sample> samples_;
  TimePoint now_;
  std::uint64_t seq_ = 0;
  std::uint64_t refusals_ = 0;
};

}  // namespace

std::unique_ptr<Channel> make_sv_channel(std::uint64_t seed) { return std::make_unique<SvChannel>(seed); }

}  // namespace layersec::attack::detail
