#include "layersec/someip/counters_json.h"

#include <string>

#include "layersec/someip/error.h"
#include "layersec/someip/message.h"

namespace layersec::someip {

nlohmann::json to_json(const RuntimeCounters& c) {
  nlohmann::json rx_drops = nlohmann::json::object();
  for (std::size_t r = 1; r < static_cast<std::size_t>(DropReason::kCount); ++r)
    if (c.rx.dropped[r]) rx_drops[std::string(to_string(static_cast<DropReason>(r)))] = c.rx.dropped[r];
  nlohmann::json sd_dropped = nlohmann::json::object();
  for (std::size_t r = 0; r < static_cast<std::size_t>(SdDropReason::kCount); ++r)
    if (c.sd_dropped.by_reason[r])
      sd_dropped[std::string(to_string(static_cast<SdDropReason>(r)))] = c.sd_dropped.by_reason[r];
  nlohmann::json sd_invalid = nlohmann::json::object();
  for (std::size_t r = 0; r < kSdErrorCount; ++r)
    if (c.sd.invalid_sd[r]) sd_invalid[std::string(to_string(static_cast<SdError>(r)))] = c.sd.invalid_sd[r];
  nlohmann::json tp_rejected_by = nlohmann::json::object();
  for (std::size_t r = 0; r < kTpErrorCount; ++r)
    if (c.tp_rejected_by[r]) tp_rejected_by[std::string(to_string(static_cast<TpError>(r)))] = c.tp_rejected_by[r];
  nlohmann::json errors = nlohmann::json::object();
  for (std::size_t code = 1; code < c.rx.errors_sent.size(); ++code)
    if (c.rx.errors_sent[code]) errors[std::string(return_code_name(static_cast<std::uint8_t>(code)))] = c.rx.errors_sent[code];
  return {{"datagrams_received", c.datagrams_received},
          {"messages_received", c.messages_received},
          {"requests_served", c.requests_served},
          {"responses_received", c.responses_received},
          {"request_timeouts", c.request_timeouts},
          {"late_responses", c.late_responses},
          {"notifications_sent", c.notifications_sent},
          {"notifications_received", c.notifications_received},
          {"notifications_unsubscribed", c.notifications_unsubscribed},
          {"secoc_protected", c.secoc_protected},
          {"secoc_verified", c.secoc_verified},
          {"secoc_rejected", c.secoc_rejected},
          {"secoc_protect_failed", c.secoc_protect_failed},
          {"secoc_syncs_sent", c.secoc_syncs_sent},
          {"secoc_syncs_accepted", c.secoc_syncs_accepted},
          {"secoc_syncs_duplicate", c.secoc_syncs_duplicate},
          {"secoc_sd_protected", c.secoc_sd_protected},
          {"secoc_sd_verified", c.secoc_sd_verified},
          {"secoc_unbound_rejected", c.secoc_unbound_rejected},
          {"secoc_unbound_refused", c.secoc_unbound_refused},
          {"secoc_protect_ns", c.secoc_protect_ns},
          {"secoc_verify_ns", c.secoc_verify_ns},
          {"sd_datagrams_sent", c.sd_datagrams_sent},
          {"tp_segments_sent", c.tp_segments_sent},
          {"tp_messages_reassembled", c.tp_messages_reassembled},
          {"tp_rejected", c.tp_rejected},
          {"tp_rejected_by", tp_rejected_by},
          {"tp_reassembled_malformed", c.tp_reassembled_malformed},
          {"tp_aborted", c.tp.aborted},
          {"tp_superseded", c.tp.superseded},
          {"tp_timed_out", c.tp.timed_out},
          {"tp_duplicates", c.tp.duplicates},
          {"sd", {{"received", c.sd.received},
                  {"own", c.sd.own},
                  {"rejected", c.sd.rejected},
                  {"not_someip", c.sd.not_someip},
                  {"invalid_sd", sd_invalid},
                  {"reboots", c.sd.reboots},
                  {"sent", c.sd.sent},
                  {"unknown_entries", c.sd.unknown_entries},
                  {"unmatched_entries", c.sd.unmatched_entries},
                  {"unsent_entries", c.sd.unsent_entries},
                  {"unsent_datagrams", c.sd.unsent_datagrams}}},
          {"transport_errors", c.transport_errors},
          {"sd_dropped", sd_dropped},
          {"rx_delivered", c.rx.delivered},
          {"rx_dropped", rx_drops},
          {"errors_sent", errors}};
}

}  // namespace layersec::someip
