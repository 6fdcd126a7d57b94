// SV attack runner. See sv_attacks.h.
//
// Set-up per configuration and class: a fresh sv::Publisher and sv::Subscriber
// on one stream at the IEC 61869-9 profile 4800/2 (F4800S2I4U4), in memory;
// the publisher's frames are copied as bytes and the attacker decides, frame
// by frame, what the subscriber receives. Tamper classes intercept one
// genuine frame per attempt (A), hand the subscriber their altered version in
// its place, then forward the next genuine frame (L) untouched, so legitimate
// delivery is measured beside every attempt.
//
// Bit flips are judged byte by byte: each configuration has a mask of the
// bytes its scheme protects (full-frame MACs: EtherType to the end of the tag;
// field-selective Chaskey-12: freshness, smpCnt, seqData, the tag and the
// cached invariants APPID/svID/noASDU/confRev/smpSynch; security.h). A flip
// the subscriber delivers is "by design" when it hit an unprotected byte and
// the delivered smpCnt and samples equal the intercepted frame's; anything
// else delivered under a secured scheme is a finding and fails the row.
#include "layersec/attack/sv_attacks.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "layersec/base/time.h"
#include "layersec/sv/dataset.h"
#include "layersec/sv/frame.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/security.h"
#include "layersec/sv/subscriber.h"

namespace layersec::attack {
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::string_view kProfile = "4800/2";
constexpr std::uint32_t kKeyId = 0x5100;
constexpr std::uint32_t kWrongKeyId = 0x0BADC0DE;
// The schemes of sv/security.h, with the shortest tags of the 62351-6 ones.
constexpr std::array<std::string_view, 8> kSchemes = {"none",       "hmac-sha256",    "hmac-sha256-80",
                                                      "aes-gmac-128", "aes-gmac-64",  "blake2s",
                                                      "chaskey12-full", "chaskey12-selective"};

std::uint64_t mix(std::uint64_t x) {  // SplitMix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

sv::KeyMaterial make_key(sv::Scheme scheme, std::uint32_t id, std::uint8_t seed, std::uint64_t initial_counter) {
  sv::KeyMaterial k;
  k.key_id = id;
  const std::size_t n = sv::key_bytes_for(scheme);
  k.key = SecretBytes(n);
  for (std::size_t i = 0; i < n; ++i) k.key[i] = static_cast<std::uint8_t>(seed + 13 * i);
  k.time_of_current_key = 1796000000;
  k.time_to_next_key_min = 60;
  k.initial_counter = initial_counter;
  return k;
}

// Reason names: the subscriber's own counter names (StreamCounters fields,
// "unknown_appid", and "malformed_<DecodeError>").
std::string reason_name(const sv::Subscriber& sub, sv::DropReason r, const sv::StreamCounters& before,
                        const std::array<std::uint64_t, sv::kDecodeErrorCount>& malformed_before) {
  using sv::DropReason;
  const auto& c = sub.counters(0);
  switch (r) {
    case DropReason::kMalformed:
      for (std::size_t i = 0; i < sv::kDecodeErrorCount; ++i) {
        const auto e = static_cast<sv::DecodeError>(i);
        if (sub.malformed(e) != malformed_before[i]) {
          std::string s = "malformed_" + std::string(sv::to_string(e));
          for (char& ch : s)
            if (ch == '-') ch = '_';
          return s;
        }
      }
      return "malformed";
    case DropReason::kUnknownAppId: return "unknown_appid";
    case DropReason::kWrongNoAsdu: return "wrong_no_asdu";
    case DropReason::kWrongDataset: return "wrong_dataset";
    case DropReason::kUnexpectedExtension: return "unexpected_extension";
    case DropReason::kSecurity:
      if (c.bad_tag != before.bad_tag) return "bad_tag";
      if (c.unknown_key != before.unknown_key) return "unknown_key";
      if (c.replayed_counter != before.replayed_counter) return "replayed_counter";
      return "bad_extension";
    case DropReason::kBadSmpCnt: return "bad_smp_cnt";
    case DropReason::kDuplicate: return "duplicates";
    case DropReason::kStale: return "stale";
    case DropReason::kInvariantMismatch: return "invariant_mismatch";
    case DropReason::kWrongSvId: return "wrong_sv_id";
    case DropReason::kConfRevMismatch: return "conf_rev_changes";
    case DropReason::kSimulated: return "simulated";
    case DropReason::kFloorNotPersisted: return "floor_not_persisted";
  }
  return "unknown";
}

// Protected content of a frame: smpCnt and sample data of every ASDU.
bool same_samples(const sv::Frame& a, const sv::Frame& b) {
  if (a.no_asdu != b.no_asdu) return false;
  for (std::size_t i = 0; i < a.no_asdu; ++i) {
    const auto& x = a.asdus[i];
    const auto& y = b.asdus[i];
    if (x.smp_cnt != y.smp_cnt || x.seq_data.size() != y.seq_data.size() ||
        std::memcmp(x.seq_data.data(), y.seq_data.data(), x.seq_data.size()) != 0) {
      return false;
    }
  }
  return true;
}

// A byte range [begin, end) of the frame.
struct Range {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// The field classes of the bit-flip attacks, located in the stream's frame.
enum class Field : std::uint8_t {
  kEthernet,
  kAppIdLength,
  kHeaderCrcFixed,  // APPID/Length/Reserved1, then the header CRC recomputed (it is no MAC)
  kSvId,
  kSmpCnt,
  kSamples,
  kSavPduOther,     // the rest of the savPdu: noASDU, confRev, smpSynch, every tag and length
  kExtension,
  kMac,
};
constexpr std::array<std::pair<Field, std::string_view>, 9> kFields = {{{Field::kEthernet, "ethernet"},
                                                                        {Field::kAppIdLength, "appid-length"},
                                                                        {Field::kHeaderCrcFixed, "header-crc-fixed"},
                                                                        {Field::kSvId, "svid"},
                                                                        {Field::kSmpCnt, "smpcnt"},
                                                                        {Field::kSamples, "samples"},
                                                                        {Field::kSavPduOther, "savpdu-other"},
                                                                        {Field::kExtension, "security-extension"},
                                                                        {Field::kMac, "mac"}}};

// Layout facts of the stream's frames (identical for every frame of a stream).
struct Layout {
  std::size_t size = 0;
  std::vector<std::vector<Range>> fields;  // indexed by Field
  std::vector<bool> protected_byte;        // what the scheme protects (security.h)
  std::size_t extension_offset = 0;
  std::size_t ethertype_offset = 0;
};

Layout layout_of(ByteSpan frame, const sv::SecurityConfig& sec) {
  Layout l;
  l.size = frame.size();
  l.fields.resize(kFields.size());
  l.protected_byte.assign(frame.size(), false);
  auto d = sv::decode_frame(frame);
  if (!d) return l;  // cannot happen for the publisher's own frames; no ranges, no attempts
  const sv::Frame& f = *d;
  auto off = [&](ByteSpan s) { return static_cast<std::size_t>(s.data() - frame.data()); };
  const std::size_t et = f.ethertype_offset;
  const std::size_t hdr = f.header_offset();
  l.extension_offset = f.savpdu_end;
  l.ethertype_offset = et;
  l.fields[static_cast<std::size_t>(Field::kEthernet)] = {{0, et + 2}};
  l.fields[static_cast<std::size_t>(Field::kAppIdLength)] = {{hdr, hdr + 8}};
  std::vector<Range> svid, smpcnt, samples, confrev, smpsynch;
  for (std::size_t i = 0; i < f.no_asdu; ++i) {
    const auto& a = f.asdus[i];
    svid.push_back({off(a.sv_id), off(a.sv_id) + a.sv_id.size()});
    smpcnt.push_back({a.smp_cnt_offset, a.smp_cnt_offset + 2});
    samples.push_back({a.seq_data_offset, a.seq_data_offset + a.seq_data.size()});
    const std::size_t cr = a.smp_cnt_offset + 2 + 2;  // confRev value after 0x83 0x04
    confrev.push_back({cr, cr + 4});
    const std::size_t ss = cr + 4 + (a.has_refr_tm ? 10 : 0) + 2;  // smpSynch value after 0x85 0x01
    smpsynch.push_back({ss, ss + 1});
  }
  // savPdu bytes outside the svID, smpCnt and seqData values.
  std::vector<Range> other;
  std::size_t from = hdr + 8;
  std::vector<Range> taken = svid;
  for (const auto* v : {&smpcnt, &samples})
    for (const auto& r : *v) taken.push_back(r);
  std::sort(taken.begin(), taken.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (const auto& r : taken) {
    if (r.begin > from) other.push_back({from, r.begin});
    from = std::max(from, r.end);
  }
  if (f.savpdu_end > from) other.push_back({from, f.savpdu_end});
  l.fields[static_cast<std::size_t>(Field::kSavPduOther)] = other;
  l.fields[static_cast<std::size_t>(Field::kSvId)] = svid;
  l.fields[static_cast<std::size_t>(Field::kSmpCnt)] = smpcnt;
  l.fields[static_cast<std::size_t>(Field::kSamples)] = samples;
  if (sec.scheme == sv::Scheme::kNone) return l;
  l.fields[static_cast<std::size_t>(Field::kHeaderCrcFixed)] = {{hdr, hdr + 6}};
  const auto el = sv::extension_layout(sec);
  const std::size_t ext = f.savpdu_end;
  l.fields[static_cast<std::size_t>(Field::kExtension)] = {{ext, ext + el.tag}};
  l.fields[static_cast<std::size_t>(Field::kMac)] = {{ext + el.tag, ext + el.tag + el.tag_len}};
  auto mark = [&](const Range& r) {
    for (std::size_t i = r.begin; i < r.end && i < l.protected_byte.size(); ++i) l.protected_byte[i] = true;
  };
  if (sec.scheme != sv::Scheme::kChaskey12Selective) {
    mark({et, ext + el.tag + el.tag_len});  // EtherType .. end of the tag
    return l;
  }
  // Field-selective: MAC over freshness ‖ smpCnt ‖ seqData; invariants compared after it.
  mark({ext + el.freshness, ext + el.freshness + sv::kFreshnessBytes});
  mark({ext + el.tag, ext + el.tag + el.tag_len});
  mark({hdr, hdr + 2});  // APPID (stream lookup)
  for (const auto* v : {&svid, &smpcnt, &samples, &confrev, &smpsynch})
    for (const auto& r : *v) mark(r);
  // noASDU value: savPdu 0x60 L(1..3) then 0x80 0x01 value.
  const std::size_t pdu = hdr + 8;
  if (pdu + 1 < frame.size()) {
    const std::uint8_t lb = frame[pdu + 1];
    const std::size_t len_bytes = (lb & 0x80) ? 1 + (lb & 0x7F) : 1;
    mark({pdu + 1 + len_bytes + 2, pdu + 1 + len_bytes + 3});
  }
  return l;
}

// One publisher, one subscriber, the attacker between them.
class Rig {
 public:
  Rig(const sv::SecurityConfig& sec, std::uint64_t seed) : sec_(sec), rng_(seed) {
    profile_ = *sv::find_profile(kProfile);
    stream_.asdus_per_frame = profile_.asdus_per_frame;
    stream_.security = sec;
    sub_cfg_.asdus_per_frame = profile_.asdus_per_frame;
    sub_cfg_.smp_cnt_wrap = profile_.smp_cnt_wrap();
    sub_cfg_.sv_id = stream_.sv_id;
    sub_cfg_.security = sec;
    sub_cfg_.timeout = Duration::milliseconds(10);
    if (secured()) {
      pub_.emplace(stream_, profile_, TimePoint{}, make_key(sec.scheme, kKeyId, 1, 0));
      sub_.add_stream(sub_cfg_, make_key(sec.scheme, kKeyId, 1, 0));
    } else {
      pub_.emplace(stream_, profile_, TimePoint{});
      sub_.add_stream(sub_cfg_);
    }
    samples_.resize(profile_.asdus_per_frame * stream_.dataset.channel_count());
  }

  [[nodiscard]] bool secured() const { return sec_.scheme != sv::Scheme::kNone; }
  [[nodiscard]] const sv::StreamConfig& stream() const { return stream_; }
  [[nodiscard]] const sv::Profile& profile() const { return profile_; }
  [[nodiscard]] std::mt19937_64& rng() { return rng_; }
  [[nodiscard]] const std::vector<sv::Sample>& last_samples() const { return samples_; }
  [[nodiscard]] std::uint64_t frames_per_wrap() const { return profile_.smp_cnt_wrap() / profile_.asdus_per_frame; }

  // The next genuine frame, with random sample values.
  Bytes next() {
    for (auto& s : samples_) s = sv::Sample{static_cast<std::int32_t>(rng_()), 0};
    now_ = pub_->next_deadline();
    auto f = pub_->build_next(samples_);
    if (!f) return {};
    return Bytes(f->begin(), f->end());
  }

  // Forwards a genuine frame; counts it delivered or lost.
  bool forward(ByteSpan frame, AttackRow& row) {
    const bool ok = sub_.on_frame(frame, now_).ok();
    ++(ok ? row.legit_delivered : row.legit_lost);
    return ok;
  }

  // Hands the subscriber an attack frame. Returns the delivered frame's
  // decoded copy (views of `frame`) or nothing; counts accepted/rejected.
  std::optional<sv::Frame> attack(ByteSpan frame, AttackRow& row) {
    ++row.attempts;
    const sv::StreamCounters before = sub_.counters(0);
    std::array<std::uint64_t, sv::kDecodeErrorCount> mal{};
    for (std::size_t i = 0; i < mal.size(); ++i) mal[i] = sub_.malformed(static_cast<sv::DecodeError>(i));
    auto r = sub_.on_frame(frame, now_);
    if (!r) {
      ++row.rejected[reason_name(sub_, r.error(), before, mal)];
      return std::nullopt;
    }
    ++row.accepted;
    return *r->frame;
  }

 private:
  sv::SecurityConfig sec_;
  std::mt19937_64 rng_;
  sv::Profile profile_{};
  sv::StreamConfig stream_;
  sv::SubscriptionConfig sub_cfg_;
  std::optional<sv::Publisher> pub_;
  sv::Subscriber sub_;
  std::vector<sv::Sample> samples_;
  TimePoint now_;
};

std::uint64_t uniform(std::mt19937_64& rng, std::uint64_t n) { return n == 0 ? 0 : rng() % n; }

// "a-b ms" for a range of frame lags (min > max when there were none).
std::string ms_range(const Rig& rig, std::uint64_t min_frames, std::uint64_t max_frames) {
  if (min_frames > max_frames) return "(none)";
  const double us = rig.profile().interarrival_us();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f-%.1f ms", static_cast<double>(min_frames) * us / 1000.0,
                static_cast<double>(max_frames) * us / 1000.0);
  return buf;
}

AttackRow base_row(const std::string& configuration, std::string_view cls, std::string note) {
  AttackRow r;
  r.layer = "sv";
  r.configuration = configuration;
  r.attack_class = std::string(cls);
  r.note = std::move(note);
  return r;
}

// Frames forwarded before the attack so supervision and the counter floor are set.
constexpr int kWarmup = 4;

AttackRow run_passive(Rig& rig, const std::string& cfg, std::uint64_t attempts) {
  AttackRow row = base_row(cfg, "A1.passive",
                           rig.secured() ? "captures every frame and decodes seqData: the SV schemes are "
                                           "integrity-only, samples travel in clear (reported, not a failure)"
                                         : "captures every frame and decodes seqData: unsecured, samples in clear");
  row.acceptance_expected = true;
  const auto& ds = rig.stream().dataset;
  for (std::uint64_t i = 0; i < attempts; ++i) {
    Bytes f = rig.next();
    ++row.attempts;
    auto d = sv::decode_frame(f);
    bool readable = d.ok();
    if (readable) {
      const std::size_t ch = ds.channel_count();
      for (std::size_t a = 0; a < d->no_asdu && readable; ++a) {
        std::array<sv::Sample, 8> got{};
        if (ch > got.size() || !ds.decode(d->asdus[a].seq_data, std::span(got.data(), ch))) {
          readable = false;
          break;
        }
        for (std::size_t c = 0; c < ch; ++c)
          if (got[c].value != rig.last_samples()[a * ch + c].value) readable = false;
      }
    }
    if (readable) ++row.accepted;
    rig.forward(f, row);
  }
  return row;
}

AttackRow run_replay_immediate(Rig& rig, const std::string& cfg, std::uint64_t attempts) {
  AttackRow row = base_row(cfg, "A2.replay.immediate",
                           "forwards a genuine frame, then sends the same bytes again at once");
  row.acceptance_expected = !rig.secured();
  for (int i = 0; i < kWarmup; ++i) rig.forward(rig.next(), row);
  for (std::uint64_t i = 0; i < attempts; ++i) {
    Bytes a = rig.next();
    rig.forward(a, row);
    rig.attack(a, row).reset();
  }
  return row;
}

// Warm-up of two smpCnt wraps, every frame forwarded and recorded.
std::vector<Bytes> record_two_wraps(Rig& rig, AttackRow& row) {
  std::vector<Bytes> rec;
  const std::uint64_t n = 2 * rig.frames_per_wrap();
  rec.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    rec.push_back(rig.next());
    rig.forward(rec.back(), row);
  }
  return rec;
}

AttackRow run_replay_delayed(Rig& rig, const std::string& cfg, std::uint64_t attempts) {
  AttackRow row = base_row(cfg, "A2.replay.delayed", "");
  row.acceptance_expected = !rig.secured();
  row.loss_allowed = !rig.secured();  // a replay seen as a gap makes the next genuine frames stale
  const std::vector<Bytes> rec = record_two_wraps(rig, row);
  const std::uint64_t fpw = rig.frames_per_wrap();
  std::uint64_t index = rec.size(), min_lag = ~std::uint64_t{0}, max_lag = 0;
  for (std::uint64_t i = 0; i < attempts; ++i) {
    Bytes a = rig.next();  // intercepted, replaced
    const std::uint64_t pick =
        (i % 2 == 0) ? (index % fpw) + fpw * uniform(rig.rng(), 2) : uniform(rig.rng(), rec.size());
    min_lag = std::min(min_lag, index - pick);
    max_lag = std::max(max_lag, index - pick);
    rig.attack(rec[pick], row).reset();
    ++index;
    rig.forward(rig.next(), row);
    ++index;
  }
  row.note = "replaces an intercepted frame by one delivered " + ms_range(rig, min_lag, max_lag) +
             " earlier (every 2nd one a whole number of smpCnt wraps old, carrying the very smpCnt the subscriber "
             "expects next)";
  return row;
}

AttackRow run_bitflip(Rig& rig, const std::string& cfg, Field field, std::string_view name, std::uint64_t attempts) {
  AttackRow row = base_row(cfg, "A2.bitflip." + std::string(name), "");
  for (int i = 0; i < kWarmup - 1; ++i) rig.forward(rig.next(), row);
  Bytes first = rig.next();
  rig.forward(first, row);
  const Layout layout = layout_of(first, rig.stream().security);
  const auto& ranges = layout.fields[static_cast<std::size_t>(field)];
  std::size_t bits = 0;
  bool has_unprotected = false;
  for (const auto& r : ranges) {
    bits += 8 * (r.end - r.begin);
    for (std::size_t b = r.begin; b < r.end; ++b) has_unprotected |= !layout.protected_byte[b];
  }
  std::uint64_t by_design = 0, findings = 0;
  std::optional<std::uint64_t> first_finding;
  for (std::uint64_t i = 0; i < attempts && bits > 0; ++i) {
    Bytes a = rig.next();
    if (a.size() != layout.size) {
      rig.forward(a, row);
      continue;
    }
    std::size_t bit = uniform(rig.rng(), bits);
    std::size_t byte = 0;
    for (const auto& r : ranges) {
      const std::size_t n = 8 * (r.end - r.begin);
      if (bit < n) {
        byte = r.begin + bit / 8;
        break;
      }
      bit -= n;
    }
    Bytes t = a;
    t[byte] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    if (field == Field::kHeaderCrcFixed) {  // the attacker recomputes the (public) header CRC
      const std::size_t et = layout.ethertype_offset;
      const std::uint16_t crc = sv::header_crc16(ByteSpan(t.data() + et, 8));
      t[et + 8] = static_cast<std::uint8_t>(crc >> 8);  // Reserved2
      t[et + 9] = static_cast<std::uint8_t>(crc);
    }
    auto delivered = rig.attack(t, row);
    if (delivered && rig.secured()) {
      auto orig = sv::decode_frame(a);
      const bool decoded = orig.ok();
      if (decoded && !layout.protected_byte[byte] && same_samples(*orig, *delivered)) {
        ++by_design;
      } else {
        ++findings;
        if (!first_finding) first_finding = i;
      }
    }
    rig.forward(rig.next(), row);
  }
  static constexpr std::array<std::string_view, 9> kWhat = {"dst, src, 802.1Q tag, EtherType",
                                                            "APPID, Length, Reserved1, Reserved2",
                                                            "APPID, Length, Reserved1, header CRC then recomputed",
                                                            "svID values",
                                                            "smpCnt values",
                                                            "seqData values",
                                                            "savPdu rest: noASDU, confRev, smpSynch, tags, lengths",
                                                            "extension up to the tag value",
                                                            "tag value"};
  std::string note = "flips one random bit (" + std::string(kWhat[static_cast<std::size_t>(field)]) +
                     ") of an intercepted frame and delivers it in its place";
  if (!rig.secured()) {
    row.acceptance_expected = true;
    row.loss_allowed = true;  // a delivered smpCnt jump makes the next genuine frame stale
    note += "; unsecured: checked only by the parser and smpCnt supervision";
  } else if (findings > 0) {
    note += "; FINDING: " + std::to_string(findings) + " flips of authenticated bytes delivered (first at attempt " +
            std::to_string(*first_finding) + ", seed as run)";
  } else if (has_unprotected) {
    row.acceptance_expected = true;
    const bool selective = rig.stream().security.scheme == sv::Scheme::kChaskey12Selective;
    std::string why = "Ethernet addresses and 802.1Q tag are outside every scheme's tag";
    if (selective && field == Field::kHeaderCrcFixed) {
      why = "selective MAC: Length and Reserved1 (Simulate and spare bits) are not authenticated, the header CRC is "
            "recomputable; APPID is checked by the stream lookup";
    } else if (selective && field == Field::kSavPduOther) {
      why = "selective MAC: noASDU/confRev/smpSynch are compared with the cached copy, BER tags and lengths are "
            "checked by the parser only";
    } else if (selective && field == Field::kAppIdLength) {
      why = "selective MAC: Length/Reserved1/Reserved2 are guarded only by the header CRC, APPID by the stream lookup";
    } else if (selective && field == Field::kExtension) {
      why = "selective MAC covers only senderId||frameCounter of the extension; keyId, algorithm and the TLV headers "
            "are checked, timeOfCurrentKey/timeToNextKey are not";
    }
    note += "; by design unauthenticated in part (" + why + "): " + std::to_string(by_design) +
            " delivered with smpCnt and samples unchanged, 0 in authenticated bytes";
  }
  row.note = note;
  return row;
}

AttackRow run_truncate(Rig& rig, const std::string& cfg, std::uint64_t attempts) {
  AttackRow row = base_row(cfg, "A2.truncate",
                           rig.secured() ? "cuts an intercepted frame at a random length; every 4th strips the "
                                           "security extension and fixes Length/Reserved1 (a well-formed "
                                           "unsecured frame)"
                                         : "cuts an intercepted frame at a random length");
  row.acceptance_expected = !rig.secured();
  for (int i = 0; i < kWarmup; ++i) rig.forward(rig.next(), row);
  for (std::uint64_t i = 0; i < attempts; ++i) {
    Bytes a = rig.next();
    Bytes t;
    auto d = sv::decode_frame(a);
    if (d.ok() && rig.secured() && i % 4 == 3) {
      t.assign(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(d->savpdu_end));
      const std::size_t h = d->header_offset();
      const std::uint16_t len = static_cast<std::uint16_t>(t.size() - h);
      t[h + 2] = static_cast<std::uint8_t>(len >> 8);
      t[h + 3] = static_cast<std::uint8_t>(len);
      t[h + 5] = 0;  // Reserved1 bits 7..0: no extension
    } else {
      t.assign(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(uniform(rig.rng(), a.size())));
    }
    rig.attack(t, row).reset();
    rig.forward(rig.next(), row);
  }
  return row;
}

AttackRow run_extend(Rig& rig, const std::string& cfg, std::uint64_t attempts) {
  AttackRow row = base_row(cfg, "A2.extend",
                           "appends 1-64 random bytes to an intercepted frame; every 2nd also raises Length to "
                           "cover them");
  row.acceptance_expected = !rig.secured();
  for (int i = 0; i < kWarmup; ++i) rig.forward(rig.next(), row);
  for (std::uint64_t i = 0; i < attempts; ++i) {
    Bytes t = rig.next();
    const std::size_t n = 1 + uniform(rig.rng(), 64);
    for (std::size_t k = 0; k < n; ++k) t.push_back(static_cast<std::uint8_t>(rig.rng()()));
    if (i % 2 == 1) {
      auto d = sv::decode_frame(ByteSpan(t.data(), t.size() - n));
      if (d.ok()) {
        const std::size_t h = d->header_offset();
        const std::uint16_t len = static_cast<std::uint16_t>(((t[h + 2] << 8) | t[h + 3]) + n);
        t[h + 2] = static_cast<std::uint8_t>(len >> 8);
        t[h + 3] = static_cast<std::uint8_t>(len);
      }
    }
    rig.attack(t, row).reset();
    rig.forward(rig.next(), row);
  }
  return row;
}

AttackRow run_forge(Rig& rig, const std::string& cfg, std::uint64_t attempts) {
  AttackRow row = base_row(cfg, "A2.forge.wrong-key",
                           rig.secured() ? "replaces an intercepted frame by one the attacker's publisher signed "
                                           "with a wrong key (3/4 under the stream's keyId, 1/4 another "
                                           "keyId), frameCounter far ahead, attacker's samples, the expected "
                                           "smpCnt"
                                         : "replaces an intercepted frame by one the attacker's publisher built "
                                           "(attacker's samples, the expected smpCnt); unsecured: no key needed");
  row.acceptance_expected = !rig.secured();
  const auto& sc = rig.stream();
  const auto scheme = sc.security.scheme;
  std::optional<sv::Publisher> same_id, other_id;
  if (rig.secured()) {
    same_id.emplace(sc, rig.profile(), TimePoint{}, make_key(scheme, kKeyId, 0x77, std::uint64_t{1} << 40));
    other_id.emplace(sc, rig.profile(), TimePoint{}, make_key(scheme, kWrongKeyId, 0x78, std::uint64_t{1} << 40));
  } else {
    same_id.emplace(sc, rig.profile(), TimePoint{});
    other_id.emplace(sc, rig.profile(), TimePoint{});
  }
  std::vector<sv::Sample> evil(rig.last_samples().size());
  auto build = [&](sv::Publisher& p) -> Bytes {
    for (auto& s : evil) s = sv::Sample{static_cast<std::int32_t>(rig.rng()()), 0};
    auto f = p.build_next(evil);
    return f ? Bytes(f->begin(), f->end()) : Bytes{};
  };
  auto lockstep = [&]() {  // keep the attacker's smpCnt aligned with the stream
    build(*same_id);
    build(*other_id);
  };
  for (int i = 0; i < kWarmup; ++i) {
    rig.forward(rig.next(), row);
    lockstep();
  }
  for (std::uint64_t i = 0; i < attempts; ++i) {
    Bytes a = rig.next();  // intercepted
    Bytes f1 = build(*same_id);
    Bytes f2 = build(*other_id);
    rig.attack(i % 4 == 3 ? f2 : f1, row).reset();
    rig.forward(rig.next(), row);
    lockstep();
  }
  return row;
}

AttackRow run_stale(Rig& rig, const std::string& cfg, std::uint64_t attempts) {
  AttackRow row = base_row(cfg, "A2.stale.frame-counter", "");
  row.acceptance_expected = !rig.secured();
  row.loss_allowed = !rig.secured();
  for (int i = 0; i < kWarmup; ++i) rig.forward(rig.next(), row);
  // Every other genuine frame is withheld; after one smpCnt wrap of them a
  // random withheld one is released per attempt (never delivered before).
  struct Held {
    Bytes frame;
    std::uint64_t index = 0;
  };
  std::vector<Held> held;
  std::uint64_t index = 0, min_lag = ~std::uint64_t{0}, max_lag = 0;
  const std::uint64_t fill = rig.frames_per_wrap();
  for (std::uint64_t i = 0; row.attempts < attempts; ++i) {
    held.push_back({rig.next(), index++});
    rig.forward(rig.next(), row);
    ++index;
    if (i < fill) continue;
    const std::size_t k = uniform(rig.rng(), held.size());
    std::swap(held[k], held.back());
    const std::uint64_t lag = index - held.back().index;
    min_lag = std::min(min_lag, lag);
    max_lag = std::max(max_lag, lag);
    rig.attack(held.back().frame, row).reset();
    held.pop_back();
  }
  row.note = "withholds every other genuine frame and releases them later in random order, each held back " +
             ms_range(rig, min_lag, max_lag) +
             (rig.secured() ? " (an authentic frameCounter never delivered, below the floor)"
                            : "; unsecured: no frame counter, smpCnt supervision only");
  return row;
}

}  // namespace

std::vector<AttackRow> run_sv_attacks(const AttackOptions& options) {
  std::vector<AttackRow> rows;
  const std::uint64_t n = options.attempts;
  for (std::size_t c = 0; c < kSchemes.size(); ++c) {
    const auto sec0 = sv::parse_scheme(kSchemes[c]);
    if (!sec0) continue;
    sv::SecurityConfig sec = *sec0;
    sec.sender_id = 0x4000;
    const std::string cfg = sec.scheme == sv::Scheme::kNone ? "sv-unsecured" : "sv-" + sv::scheme_name(sec);
    std::uint64_t cls = 0;
    auto seed = [&]() { return mix(options.seed ^ mix((c << 8) | cls++)); };
    {
      Rig rig(sec, seed());
      rows.push_back(run_passive(rig, cfg, n));
    }
    {
      Rig rig(sec, seed());
      rows.push_back(run_replay_immediate(rig, cfg, n));
    }
    {
      Rig rig(sec, seed());
      rows.push_back(run_replay_delayed(rig, cfg, n));
    }
    for (const auto& [field, name] : kFields) {
      const bool needs_ext =
          field == Field::kExtension || field == Field::kMac || field == Field::kHeaderCrcFixed;
      if (needs_ext && sec.scheme == sv::Scheme::kNone) {
        ++cls;
        continue;
      }
      Rig rig(sec, seed());
      rows.push_back(run_bitflip(rig, cfg, field, name, n));
    }
    {
      Rig rig(sec, seed());
      rows.push_back(run_truncate(rig, cfg, n));
    }
    {
      Rig rig(sec, seed());
      rows.push_back(run_extend(rig, cfg, n));
    }
    {
      Rig rig(sec, seed());
      rows.push_back(run_forge(rig, cfg, n));
    }
    {
      Rig rig(sec, seed());
      rows.push_back(run_stale(rig, cfg, n));
    }
  }
  return rows;
}

}  // namespace layersec::attack
