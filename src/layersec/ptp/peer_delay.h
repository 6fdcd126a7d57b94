// The 802.1AS-2020 peer-delay mechanism (§11.2.19 MDPdelayReq, §11.2.20
// MDPdelayResp), sans-I/O: timestamps in, messages and deadlines out.
//
// Initiator: every 2^logPdelayReqInterval s it sends Pdelay_Req (t1 = its TX
// timestamp, local clock); the responder's Pdelay_Resp carries t2 (receipt of
// the request, responder's clock) and arrives at t4; Pdelay_Resp_Follow_Up
// carries t3 (the response's TX time). With c1, c2 the two correction fields
// (t3c = t3 + c1 + c2, as linuxptp's tsproc does):
//   meanLinkDelay     = (r·(t4 − t1) − (t3c − t2)) / 2      (§11.2.19.3.4)
//   neighborRateRatio = (t3c_N − t3c_0) / (t4_N − t4_0)     (§11.2.19.3.3)
// over the last `rate_window` exchanges (r = neighborRateRatio; the delay is
// in the responder's time base). The reported delay is the median of the last
// `delay_filter` measurements (linuxptp's moving median).
//
// asCapable (§11.2.2 / §11.2.13.12): from configuration under the automotive
// profile; otherwise true once a delay is known, it lies within
// [min_delay_ns, neighbor_prop_delay_thresh_ns], the rate ratio is valid and
// no more than `allowed_lost_responses` requests in a row went unanswered.
// A Pdelay_Resp for another request, another requester or from this very
// clock (a loop) is dropped and counted; nothing else changes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "layersec/base/time.h"
#include "layersec/ptp/message.h"

namespace layersec::ptp {

// Duration of a log2 message interval (-8 .. 8 accepted by the ports).
Duration interval_of(std::int8_t log_interval);

// Why a received message was dropped (counted per reason by each port).
enum class DropReason : std::uint8_t {
  kMalformed,        // the codec refused it (see ParseError)
  kWrongDomain,      // domainNumber is not the port's
  kWrongSequence,    // Follow_Up / Pdelay_Resp(_Follow_Up) matches no outstanding message
  kBadCorrection,    // correctionField negative or beyond 1 s (impossible on a link)
  kSecondGm,         // automotive: Sync from a source other than the one this slave follows
  kOwnMessage,       // sent by this clock (looped back)
  kWrongRole,        // not accepted in the port's role (e.g. Sync on a master port)
  kNotAsCapable,     // Sync/Announce on a port that is not asCapable
  kPathTraceLoop,    // Announce whose path trace holds this clock
  kAnnounceDisabled, // Announce under the automotive profile (no BMCA)
  kBadInterval,      // Signaling asking for an interval out of range
  kBadRateRatio,     // a rate ratio beyond ±1000 ppm
  kInferiorAnnounce, // Announce from another source, worse than the port's unexpired information
                     // (802.1AS-2020 §10.3.12 InferiorMasterInfo: kept until announceReceiptTimeout)
};
inline constexpr std::size_t kDropReasonCount = 13;
const char* to_string(DropReason r);

struct DropCounters {
  std::array<std::uint64_t, kDropReasonCount> by_reason{};
  void count(DropReason r) { ++by_reason[static_cast<std::size_t>(r)]; }
  [[nodiscard]] std::uint64_t operator[](DropReason r) const { return by_reason[static_cast<std::size_t>(r)]; }
  [[nodiscard]] std::uint64_t total() const;
};

// A rate ratio (or neighborRateRatio) is refused beyond this (802.1AS-2020
// B.1.1 allows ±100 ppm per clock; two clocks and margin).
inline constexpr double kMaxRateOffset = 1e-3;
// Largest correctionField a link message may carry (1 s, scaled ns).
inline constexpr std::int64_t kMaxCorrection = std::int64_t{1'000'000'000} << 16;
// True for 0 <= correction <= kMaxCorrection.
bool plausible_correction(std::int64_t correction);

// Header fields every gPTP message of a port shares.
Header make_header(MessageType type, const PortIdentity& source, std::uint16_t sequence_id,
                   std::int8_t log_interval, std::uint8_t minor_version);

struct PdelayConfig {
  bool enabled = true;                        // false: inhibit_delay_req (automotive GM)
  std::int8_t log_interval = 0;               // logPdelayReqInterval
  std::int64_t neighbor_prop_delay_thresh_ns = 800;
  std::int64_t min_delay_ns = -20'000'000;    // linuxptp's min_neighbor_prop_delay
  std::uint32_t allowed_lost_responses = 3;
  std::size_t rate_window = 8;                // exchanges spanned by neighborRateRatio (2..32)
  std::size_t delay_filter = 10;              // median over this many delays (1..32)
  bool as_capable_from_config = false;        // automotive profile: asCapable true
  std::uint8_t minor_version = 1;
};

class PdelayInitiator {
 public:
  PdelayInitiator(const PortIdentity& self, const PdelayConfig& config);

  // The next time on_timer wants to run (TimePoint::max() when disabled).
  [[nodiscard]] TimePoint next_deadline() const;
  // At or after next_deadline(): the Pdelay_Req to send now (the caller
  // reports its TX timestamp with on_req_sent). An exchange still incomplete
  // counts as a lost response.
  std::optional<Message> on_timer(TimePoint now);
  void on_req_sent(std::uint16_t sequence_id, TimePoint t1);
  // Response and follow-up; returns the drop reason when refused.
  std::optional<DropReason> on_resp(const Message& resp, TimePoint t4);
  std::optional<DropReason> on_resp_follow_up(const Message& follow_up);
  // Changes the request interval (Signaling or the automotive switch-over);
  // the next request follows the new interval.
  void set_log_interval(std::int8_t log_interval, TimePoint now);

  [[nodiscard]] bool as_capable() const;
  [[nodiscard]] bool has_delay() const { return delay_count_ > 0; }
  [[nodiscard]] double mean_link_delay_ns() const { return mean_link_delay_ns_; }
  [[nodiscard]] double neighbor_rate_ratio() const { return nrr_; }
  [[nodiscard]] bool rate_ratio_valid() const { return nrr_valid_; }
  [[nodiscard]] std::uint32_t lost_responses() const { return lost_; }
  [[nodiscard]] std::uint64_t exchanges() const { return exchanges_; }
  [[nodiscard]] std::int8_t log_interval() const { return config_.log_interval; }
  [[nodiscard]] const DropCounters& drops() const { return drops_; }

 private:
  void complete();
  PortIdentity self_;
  PdelayConfig config_;
  TimePoint next_{};
  bool started_ = false;
  std::uint16_t seq_ = 0;
  bool outstanding_ = false;  // a request went out and the exchange is not complete
  bool have_t1_ = false, have_resp_ = false;
  std::int64_t t1_ = 0, t2_ = 0, t4_ = 0, c1_ = 0;
  PortIdentity responder_{};
  std::uint32_t lost_ = 0;
  std::uint64_t exchanges_ = 0;
  // neighborRateRatio window: (t3c, t4) of the last exchanges.
  std::array<std::pair<double, std::int64_t>, 32> rate_ring_{};
  std::size_t rate_count_ = 0, rate_head_ = 0;
  double nrr_ = 1.0;
  bool nrr_valid_ = false;
  std::array<double, 32> delays_{};
  std::size_t delay_count_ = 0, delay_head_ = 0;
  double mean_link_delay_ns_ = 0;
  DropCounters drops_{};
};

// The responder side: stateless apart from the response waiting for its TX
// timestamp.
class PdelayResponder {
 public:
  PdelayResponder(const PortIdentity& self, std::uint8_t minor_version) : self_(self), minor_version_(minor_version) {}
  // A Pdelay_Req received at t2 (local clock): the Pdelay_Resp to send.
  Message on_req(const Message& req, TimePoint t2);
  // The response's TX timestamp t3: the Pdelay_Resp_Follow_Up to send, or
  // nothing when no response is waiting under that sequence id.
  std::optional<Message> on_resp_sent(std::uint16_t sequence_id, TimePoint t3);

 private:
  PortIdentity self_;
  std::uint8_t minor_version_;
  bool pending_ = false;
  std::uint16_t pending_seq_ = 0;
  PortIdentity pending_requester_{};
};

}  // namespace layersec::ptp
