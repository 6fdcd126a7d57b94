#include "layersec/tsn/st_stream.h"

#include <algorithm>

namespace layersec::tsn {

namespace {

// The class's first window in the cycle: an entry where its gate opens after
// a closed entry (the cycle wraps), extended over the open entries after it.
// A gate that never closes: the whole cycle from 0.
bool first_window(const GateControlList& gcl, int c, std::int64_t cycle, std::int64_t& open, std::int64_t& len) {
  const GateMask bit = static_cast<GateMask>(1u << c);
  const std::size_t n = gcl.entries.size();
  if (n == 0 || cycle <= 0) return false;
  const auto is_open = [&](std::size_t i) { return (gcl.entries[i % n].gates & bit) != 0; };
  bool any_open = false, any_closed = false;
  for (std::size_t i = 0; i < n; ++i) (is_open(i) ? any_open : any_closed) = true;
  if (!any_open) return false;
  if (!any_closed) {
    open = 0;
    len = cycle;
    return true;
  }
  std::int64_t t = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (is_open(i) && !is_open(i + n - 1)) {
      open = t;
      len = 0;
      for (std::size_t j = i; is_open(j); ++j) len += gcl.entries[j % n].interval_ns;
      return true;
    }
    t += gcl.entries[i].interval_ns;
  }
  return false;
}

}  // namespace

const char* to_string(StPlanError e) {
  switch (e) {
    case StPlanError::kNoWindow: return "no_window";
    case StPlanError::kNoLoad: return "no_load";
    case StPlanError::kDoesNotFit: return "does_not_fit";
  }
  return "unknown";
}

std::optional<StPlan> plan_st_releases(const GateControlList& gcl, const StPlanInputs& in, StPlanError* error,
                                       std::string* why) {
  const auto fail = [&](StPlanError e, std::string text) -> std::optional<StPlan> {
    if (error) *error = e;
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  StPlan p;
  p.cycle_ns = cycle_time_of(gcl);
  if (in.traffic_class < 0 || in.traffic_class >= kMaxTrafficClasses ||
      !first_window(gcl, in.traffic_class, p.cycle_ns, p.window_open_ns, p.window_len_ns)) {
    return fail(StPlanError::kNoWindow, "class " + std::to_string(in.traffic_class) + " has no open window");
  }
  p.payload_bits = static_cast<std::uint64_t>(in.payload_bytes) * 8;
  p.offered_bits_per_cycle = in.offered_bits_per_cycle;
  if (p.payload_bits == 0 || in.offered_bits_per_cycle == 0 || in.frame_bytes == 0 || in.link_bps == 0) {
    return fail(StPlanError::kNoLoad, "no payload, frame, link speed or offered load");
  }
  p.wire_ns = wire_time_ns(in.frame_bytes + in.expansion_bytes + 4, in.link_bps);
  p.max_frames_per_cycle = (in.offered_bits_per_cycle + p.payload_bits - 1) / p.payload_bits;
  const auto n = static_cast<std::int64_t>(p.max_frames_per_cycle);
  p.spacing_ns = std::max(p.wire_ns, (p.window_len_ns - p.wire_ns) / n);
  const std::int64_t last_end = (n - 1) * p.spacing_ns + p.wire_ns;
  if (last_end > p.window_len_ns) {
    return fail(StPlanError::kDoesNotFit,
                std::to_string(p.max_frames_per_cycle) + " frames of " + std::to_string(p.wire_ns) +
                    " ns on the wire per cycle need " + std::to_string(last_end) + " ns; the class's window is " +
                    std::to_string(p.window_len_ns) + " ns");
  }
  p.tail_slack_ns = p.window_len_ns - last_end;
  // The port's arithmetic for one full cycle: frame k arrives at its release,
  // starts when the previous one has left the wire.
  std::vector<std::int64_t> end(p.max_frames_per_cycle);
  for (std::uint64_t k = 0; k < p.max_frames_per_cycle; ++k) {
    const std::int64_t arrive = static_cast<std::int64_t>(k) * p.spacing_ns;
    const std::int64_t start = k == 0 ? arrive : std::max(arrive, end[k - 1]);
    end[k] = start + p.wire_ns;
    p.planned_max_wait_ns = std::max(p.planned_max_wait_ns, start - arrive);
    std::uint64_t ahead = 0;
    for (std::uint64_t j = 0; j < k; ++j) ahead += end[j] > arrive ? 1 : 0;
    p.planned_max_ahead = std::max(p.planned_max_ahead, ahead);
  }
  return p;
}

std::uint64_t frames_before_cycle(const StPlan& p, std::uint64_t c) {
  return p.payload_bits == 0 ? 0 : c * p.offered_bits_per_cycle / p.payload_bits;
}

std::uint64_t frames_in_cycle(const StPlan& p, std::uint64_t c) {
  return frames_before_cycle(p, c + 1) - frames_before_cycle(p, c);
}

std::int64_t release_ns(const StPlan& p, std::int64_t cycle0_ns, std::uint64_t c, std::uint64_t k) {
  return cycle0_ns + static_cast<std::int64_t>(c) * p.cycle_ns + p.window_open_ns +
         static_cast<std::int64_t>(k) * p.spacing_ns;
}

bool encode_st_datagram(const StDatagram& d, MutableByteSpan out) {
  if (out.size() < kStHeaderBytes) return false;
  ByteWriter w(out);
  return w.u32(kStMagic) && w.u32(d.run_id) && w.u64(d.seq) && w.u64(static_cast<std::uint64_t>(d.send_ns)) &&
         w.fill(0, out.size() - kStHeaderBytes);
}

const char* to_string(StRefusal r) {
  switch (r) {
    case StRefusal::kSize: return "size";
    case StRefusal::kMagic: return "magic";
    case StRefusal::kRunId: return "run_id";
    case StRefusal::kSeqRange: return "seq_range";
    case StRefusal::kPadding: return "padding";
    case StRefusal::kBadTime: return "bad_time";
  }
  return "unknown";
}

namespace {
// What the receiver keeps a bit for (600 s at 100,000 frames/s and more).
constexpr std::uint64_t kMaxTrackedSeq = 100'000'000;
}  // namespace

StReceiver::StReceiver(std::size_t payload_bytes, std::uint32_t run_id, std::uint64_t max_seq)
    : payload_bytes_(std::max(payload_bytes, kStHeaderBytes)),
      run_id_(run_id),
      max_seq_(std::min(max_seq, kMaxTrackedSeq)),
      seen_(max_seq_, false) {}

std::optional<StRefusal> StReceiver::on_datagram(ByteSpan payload, std::int64_t now_ns) {
  const auto refuse = [&](StRefusal r) {
    ++c_.refused[static_cast<int>(r)];
    return std::optional<StRefusal>(r);
  };
  if (payload.size() != payload_bytes_) return refuse(StRefusal::kSize);
  ByteReader r(payload);
  const std::uint32_t magic = r.u32();
  const std::uint32_t run = r.u32();
  const std::uint64_t seq = r.u64();
  const auto sent = static_cast<std::int64_t>(r.u64());
  if (!r.ok() || magic != kStMagic) return refuse(StRefusal::kMagic);
  if (run != run_id_) return refuse(StRefusal::kRunId);
  if (seq >= max_seq_) return refuse(StRefusal::kSeqRange);
  const ByteSpan pad = r.rest();
  if (std::any_of(pad.begin(), pad.end(), [](std::uint8_t b) { return b != 0; })) return refuse(StRefusal::kPadding);
  if (sent < 0 || sent > now_ns) return refuse(StRefusal::kBadTime);
  if (seen_[seq]) {
    ++c_.duplicates;
    return std::nullopt;
  }
  seen_[seq] = true;
  ++c_.received;
  if (seq + 1 < c_.highest_seq_plus1) ++c_.reordered;
  c_.highest_seq_plus1 = std::max(c_.highest_seq_plus1, seq + 1);
  const std::int64_t transit = now_ns - sent;
  latency_us_.push_back(static_cast<double>(transit) / 1e3);
  sample_seq_.push_back(seq);
  if (have_transit_) {
    const std::int64_t d = transit - last_transit_ns_;
    jitter_ns_ += (static_cast<double>(d < 0 ? -d : d) - jitter_ns_) / 16.0;
  }
  have_transit_ = true;
  last_transit_ns_ = transit;
  return std::nullopt;
}

std::uint64_t StReceiver::lost(std::uint64_t sent) const {
  const std::uint64_t n = std::min<std::uint64_t>(sent, max_seq_);
  std::uint64_t got = 0;
  for (std::uint64_t i = 0; i < n; ++i) got += seen_[i] ? 1 : 0;
  return sent - got;
}

std::uint64_t StReceiver::refused_total() const {
  std::uint64_t t = 0;
  for (const auto v : c_.refused) t += v;
  return t;
}

}  // namespace layersec::tsn
