// Request/response classes of the SOME/IP + SecOC attack runner, on the bed
// of someip_attack_bed.h (configurations with has_rr(): the unsecured
// baseline and secoc-vendor-timestamp; the method's request and response are
// SecOC PDUs of their own, timestamp freshness both ways):
//   A2.rr.replay-request            a request re-sent: executions counted
//   A2.rr.replay-response           the last response re-sent while the next
//                                   request is pending
//   A2.rr.response-to-other-session the response to call A relabelled with the
//                                   session of call B, pending beside it
//   A2.rr.response-to-other-client  the response's client id changed
//   A2.rr.event-to-response         a notification relabelled as the response
//                                   to a pending call (its real one dropped)
#pragma once

#include <vector>

#include "layersec/attack/report.h"
#include "layersec/attack/someip_attack_bed.h"

namespace layersec::attack::someip_bed {

// Appends the request/response rows for `info` (nothing without has_rr()).
void run_rr_classes(Bed& bed, const ConfigInfo& info, const AttackOptions& options, std::vector<AttackRow>& rows);

}  // namespace layersec::attack::someip_bed
