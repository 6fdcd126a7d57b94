// The SV channel of the restart and recovery runners (restart_channel.h): an
// sv::Publisher and an sv::Subscriber on one stream at the IEC 61869-9
// profile 4800/2, HMAC-SHA256 (IEC 62351-6). The publisher persists no state:
// its frameCounter starts at the (simulated) wall-clock time in ns at every
// start, as `sv publish` does (sv_io publisher_counter_base(), docs/sv.md
// "Freshness across restarts"). The subscriber persists its counter floor
// (sv/floor_store.h) in an sv_io::FileFloorStore in the state directory
// (`sv subscribe --state`), reserving kFloorReserve frameCounters ahead, or in
// an sv::MemoryFloorStore when there is no state directory (recovery runner).
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "layersec/attack/restart_channel.h"
#include "layersec/base/bytes.h"
#include "layersec/base/secret.h"
#include "layersec/sv/dataset.h"
#include "layersec/sv/floor_store.h"
#include "layersec/sv/frame.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/security.h"
#include "layersec/sv/subscriber.h"
#include "layersec/sv_io/floor_file.h"

namespace layersec::attack::detail {
namespace {

constexpr std::int64_t kEpochNs = 1'780'000'000LL * 1'000'000'000LL;
constexpr std::uint32_t kKeyId = 0x5200;
// frameCounters reserved per save: about 107 ms of the 2,400 frames/s of
// 4800/2, the most a crashed subscriber loses of a running publisher.
constexpr std::uint64_t kFloorReserve = 256;

std::string floor_file_reason(sv_io::FloorFileError e) {
  switch (e) {
    case sv_io::FloorFileError::kMissing: return "floor_state_refused_missing";
    case sv_io::FloorFileError::kSymlink: return "floor_state_refused_symlink";
    case sv_io::FloorFileError::kCorrupt: return "floor_state_refused_corrupt";
    case sv_io::FloorFileError::kInsecure: return "floor_state_refused_insecure";
    case sv_io::FloorFileError::kExists: return "floor_state_refused_exists";
    case sv_io::FloorFileError::kIo: return "floor_state_refused_io";
  }
  return "floor_state_refused";
}

std::string floor_reason(sv::FloorError e) {
  switch (e) {
    case sv::FloorError::kMissing: return "floor_state_refused_missing";
    case sv::FloorError::kStore: return "floor_state_refused_store";
    case sv::FloorError::kCorrupt: return "floor_state_refused_corrupt";
    case sv::FloorError::kBadReserve: return "floor_state_refused_reserve";
  }
  return "floor_state_refused";
}

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
  SvChannel(std::uint64_t seed, const std::string& state_dir)
      : seed_(seed), rx_path_(state_dir.empty() ? std::string() : state_dir + "/sv-floor.state"),
        now_(TimePoint::from_ns(kEpochNs)) {
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
    info_.description =
        "SV 4800/2, HMAC-SHA256-256, frameCounter from the wall clock at start, subscriber floor persisted (reserve " +
        std::to_string(kFloorReserve) + ")";
  }

  const ChannelInfo& info() const override { return info_; }

  std::optional<std::string> start_sender(bool) override {
    pub_.emplace(stream_, profile_, now_, key(static_cast<std::uint64_t>(now_.ns())));
    return std::nullopt;
  }
  std::optional<std::string> start_receiver(bool first) override {
    sv::FloorStore* store = &memory_;
    if (!rx_path_.empty()) {
      auto f = first ? sv_io::FileFloorStore::create(rx_path_) : sv_io::FileFloorStore::open(rx_path_);
      if (!f) return floor_file_reason(f.error());
      file_.emplace(std::move(f).value());
      store = &*file_;
    }
    sub_.emplace();
    sub_->add_stream(sub_cfg_, key(0));
    const auto st = sub_->set_floor_store(store, kFloorReserve, first ? sv::FloorStart::kFirstStart
                                                                      : sv::FloorStart::kResume);
    if (!st) {
      sub_.reset();
      file_.reset();
      return floor_reason(st.error());
    }
    return std::nullopt;
  }
  void kill_sender() override { pub_.reset(); }
  void kill_receiver() override {
    sub_.reset();
    file_.reset();  // only what the file holds survives
  }
  bool sender_up() const override { return pub_.has_value(); }
  bool receiver_up() const override { return sub_.has_value(); }
  std::string sender_state_path() const override { return {}; }
  std::string receiver_state_path() const override { return rx_path_; }

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
  std::string rx_path_;                           // empty: memory_
  sv::MemoryFloorStore memory_;                   // outlives a kill, as a file would
  std::optional<sv_io::FileFloorStore> file_;
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

std::unique_ptr<Channel> make_sv_channel(std::uint64_t seed, const std::string& state_dir) {
  return std::make_unique<SvChannel>(seed, state_dir);
}

}  // namespace layersec::attack::detail
