#include "layersec/someip/tp.h"

#include <algorithm>
#include <cstring>

namespace layersec::someip {

std::string_view to_string(TpError e) {
  switch (e) {
    case TpError::kNotTp: return "not-tp";
    case TpError::kTruncatedTpHeader: return "truncated-tp-header";
    case TpError::kEmptySegment: return "empty-segment";
    case TpError::kMisaligned: return "misaligned";
    case TpError::kTooLarge: return "too-large";
    case TpError::kTooManyReassemblies: return "too-many-reassemblies";
    case TpError::kInconsistentHeader: return "inconsistent-header";
    case TpError::kOverlap: return "overlap";
    case TpError::kInconsistentLength: return "inconsistent-length";
  }
  return "unknown";
}

Result<TpSegment, TpError> parse_tp_segment(const MessageView& m) {
  if (!is_tp(m.header.message_type)) return Err(TpError::kNotTp);
  ByteReader r(m.payload);
  const std::uint32_t word = r.u32();
  if (!r.ok()) return Err(TpError::kTruncatedTpHeader);
  TpSegment s;
  s.header = m.header;
  s.offset = word & 0xFFFFFFF0u;  // upper 28 bits = offset / 16 (feat_req_someiptp_768)
  s.more_segments = (word & 0x1u) != 0;  // reserved bits 0x0E ignored (_769)
  s.data = r.rest();
  return s;
}

bool write_tp_header(ByteWriter& w, std::uint32_t offset_bytes, bool more_segments) {
  if (offset_bytes % kTpAlignment != 0) return false;
  return w.u32(offset_bytes | (more_segments ? 1u : 0u));
}

// ---- segmenter -------------------------------------------------------------

TpSegmenter::TpSegmenter(const Header& original, ByteSpan payload, std::size_t max_segment)
    : header_(original), payload_(payload) {
  header_.message_type = with_tp(original.message_type);
  max_segment_ = std::max<std::size_t>(kTpAlignment, max_segment - max_segment % kTpAlignment);
}

std::size_t TpSegmenter::segment_count() const {
  if (payload_.empty()) return 1;
  return (payload_.size() + max_segment_ - 1) / max_segment_;
}

bool TpSegmenter::write_next(ByteWriter& w) {
  if (done()) return false;
  const std::size_t n = std::min(max_segment_, payload_.size() - pos_);
  const bool more = pos_ + n < payload_.size();
  if (pos_ > 0xFFFFFFF0u) return false;
  const bool ok = write_header(w, header_, kTpHeaderSize + n) &&
                  write_tp_header(w, static_cast<std::uint32_t>(pos_), more) &&
                  w.bytes(payload_.subspan(pos_, n));
  if (!ok) return false;
  pos_ += n;
  emitted_ = true;
  return true;
}

// ---- reassembler -----------------------------------------------------------

TpReassembler::TpReassembler(TpLimits limits) : limits_(limits) {
  slots_.resize(limits_.max_concurrent);
}

void TpReassembler::release(Slot& s) {
  s.in_use = false;
  s.blocks_set = 0;
  s.total = 0;
  s.total_known = false;
  s.blocks.clear();
  // The buffer keeps its capacity (bounded by the limits) for reuse.
  s.buf.clear();
}

Result<TpReassembler::Outcome, TpError> TpReassembler::abort(Slot& s, TpError e) {
  ++counters_.rejected;
  ++counters_.rejected_by[static_cast<std::size_t>(e)];
  ++counters_.aborted;
  release(s);
  return Err(e);
}

Result<TpReassembler::Outcome, TpError> TpReassembler::on_segment(TimePoint now,
                                                                  const Endpoint& source,
                                                                  const TpSegment& seg) {
  ++counters_.segments;
  on_timer(now);
  auto reject = [&](TpError e) -> Result<Outcome, TpError> {
    ++counters_.rejected;
    ++counters_.rejected_by[static_cast<std::size_t>(e)];
    return Err(e);
  };
  if (!is_tp(seg.header.message_type)) return reject(TpError::kNotTp);
  const std::size_t len = seg.data.size();
  if (len == 0) return reject(TpError::kEmptySegment);
  if (seg.more_segments && len % kTpAlignment != 0) return reject(TpError::kMisaligned);
  const std::uint64_t end = std::uint64_t{seg.offset} + len;

  const MessageType base_type = without_tp(seg.header.message_type);
  Slot* slot = nullptr;
  Slot* free_slot = nullptr;
  for (auto& s : slots_) {
    if (!s.in_use) {
      if (free_slot == nullptr) free_slot = &s;
      continue;
    }
    if (s.source == source && s.header.service_id == seg.header.service_id &&
        s.header.method_id == seg.header.method_id && s.header.client_id == seg.header.client_id &&
        s.header.message_type == base_type) {
      slot = &s;
      break;
    }
  }
  if (slot != nullptr && slot->header.session_id != seg.header.session_id) {
    // A new session for the same sender and method replaces the old message.
    ++counters_.superseded;
    release(*slot);
    free_slot = slot;
    slot = nullptr;
  }
  if (end > limits_.max_message_size) {
    if (slot != nullptr) return abort(*slot, TpError::kTooLarge);
    return reject(TpError::kTooLarge);
  }
  if (slot == nullptr) {
    if (free_slot == nullptr) return reject(TpError::kTooManyReassemblies);
    slot = free_slot;
    release(*slot);  // may still hold the bytes of a message completed earlier
    slot->in_use = true;
    slot->source = source;
    slot->header = seg.header;
    slot->header.message_type = base_type;
    slot->deadline = now + limits_.timeout;
  } else if (slot->header.protocol_version != seg.header.protocol_version ||
             slot->header.interface_version != seg.header.interface_version ||
             slot->header.return_code != seg.header.return_code) {
    return abort(*slot, TpError::kInconsistentHeader);
  }
  Slot& s = *slot;
  if (s.total_known && end > s.total) return abort(s, TpError::kInconsistentLength);
  if (!seg.more_segments && s.total_known && end != s.total)
    return abort(s, TpError::kInconsistentLength);
  if (!seg.more_segments && !s.total_known) {
    // The end must not cut into data already received.
    const std::size_t last_block = (s.blocks.size() * 64);
    for (std::size_t b = (end + kTpAlignment - 1) / kTpAlignment; b < last_block; ++b)
      if (test_block(s, b)) return abort(s, TpError::kInconsistentLength);
  }

  const std::size_t first_b = seg.offset / kTpAlignment;
  const std::size_t end_b = static_cast<std::size_t>((end + kTpAlignment - 1) / kTpAlignment);
  std::size_t already = 0;
  for (std::size_t b = first_b; b < end_b; ++b) already += test_block(s, b) ? 1 : 0;
  if (already == end_b - first_b) {
    // Every block is there: an exact duplicate is harmless, anything else is not.
    const bool same = s.buf.size() >= kHeaderSize + end &&
                      std::memcmp(s.buf.data() + kHeaderSize + seg.offset, seg.data.data(), len) == 0 &&
                      (seg.more_segments || (s.total_known && s.total == end));
    if (!same) return abort(s, TpError::kOverlap);
    ++counters_.duplicates;
    return Outcome{Status::kDuplicate, {}};
  }
  if (already != 0) return abort(s, TpError::kOverlap);

  if (s.buf.size() < kHeaderSize + end) s.buf.resize(kHeaderSize + static_cast<std::size_t>(end));
  if (s.blocks.size() * 64 < end_b) s.blocks.resize((end_b + 63) / 64);
  std::memcpy(s.buf.data() + kHeaderSize + seg.offset, seg.data.data(), len);
  for (std::size_t b = first_b; b < end_b; ++b) s.blocks[b / 64] |= std::uint64_t{1} << (b % 64);
  s.blocks_set += end_b - first_b;
  if (!seg.more_segments) {
    s.total = static_cast<std::uint32_t>(end);
    s.total_known = true;
  }
  if (!s.total_known || s.blocks_set != (s.total + kTpAlignment - 1) / kTpAlignment)
    return Outcome{Status::kIncomplete, {}};

  // Complete: write the header of the original message in front.
  ByteWriter w(MutableByteSpan(s.buf.data(), kHeaderSize));
  if (!write_header(w, s.header, s.total)) return abort(s, TpError::kTooLarge);
  const std::size_t size = kHeaderSize + s.total;
  ++counters_.completed;
  s.buf.resize(size);
  Outcome out{Status::kComplete, ByteSpan(s.buf.data(), size)};
  // Free the slot but keep the bytes until the next call.
  s.in_use = false;
  s.blocks.clear();
  s.blocks_set = 0;
  s.total_known = false;
  return out;
}

void TpReassembler::on_timer(TimePoint now) {
  for (auto& s : slots_) {
    if (s.in_use && now >= s.deadline) {
      ++counters_.timed_out;
      release(s);
    }
  }
}

TimePoint TpReassembler::next_deadline() const {
  TimePoint t = TimePoint::max();
  for (const auto& s : slots_)
    if (s.in_use) t = std::min(t, s.deadline);
  return t;
}

std::size_t TpReassembler::in_progress() const {
  return static_cast<std::size_t>(std::count_if(slots_.begin(), slots_.end(),
                                                [](const Slot& s) { return s.in_use; }));
}

std::size_t TpReassembler::buffered_bytes() const {
  std::size_t n = 0;
  for (const auto& s : slots_) n += s.buf.size();
  return n;
}

}  // namespace layersec::someip
