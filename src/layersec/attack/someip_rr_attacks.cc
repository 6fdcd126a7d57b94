#include "layersec/attack/someip_rr_attacks.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/harness/scenario_layout.h"
#include "layersec/net/sim.h"

namespace layersec::attack::someip_bed {

namespace {

namespace L = harness::layout;

// Long enough for a call to complete or time out (kRrTimeout).
constexpr Duration kSettle = Duration::milliseconds(60);

}  // namespace

void run_rr_classes(Bed& bed, const ConfigInfo& info, const AttackOptions& options, std::vector<AttackRow>& rows) {
  if (!has_rr(info.config)) return;
  const std::uint64_t n = options.attempts;
  {
    AttackRow r = make_row(info, "A2.rr.replay-request",
                           "each request re-sent at once after the original; accepted = extra executions at the server");
    bed.begin();
    for (std::uint64_t i = 0; i < n; ++i) {
      (void)bed.rr_request(false);
      bed.sim().run_for(Duration::milliseconds(1));
      bed.inject_from_subscriber(bed.attacker().last_request);
      bed.sim().run_for(Duration::milliseconds(1));
    }
    bed.sim().run_for(kSettle);
    r.attempts = n;
    const std::uint64_t extra = bed.executions() - bed.rr_requests_sent();
    bed.end(r);
    // The replayed request's response reaches the client after its call
    // completed: a late response, not a delivery.
    r.accepted += extra;
    if (r.rejected.count("uncounted") != 0) {
      const std::uint64_t u = r.rejected["uncounted"];
      if (u <= extra) r.rejected.erase("uncounted");
      else r.rejected["uncounted"] = u - extra;
    }
    r.rejected.erase("someip_late_responses");
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = make_row(info, "A2.rr.replay-response",
                           "the last response re-sent while the next request is pending");
    bed.begin();
    (void)bed.rr_request(false);
    bed.sim().run_for(Duration::milliseconds(2));
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::vector<std::uint8_t> old = bed.attacker().last_response;
      (void)bed.rr_request(false);
      bed.inject(old);
      bed.sim().run_for(Duration::milliseconds(2));
    }
    bed.sim().run_for(kSettle);
    r.attempts = n;
    bed.end(r);
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = make_row(info, "A2.rr.response-to-other-session",
                           "two calls pending: the response to the first relabelled with the second's session");
    // Unsecured, the second call completes with the first one's payload and
    // its own response comes late: the attack costs it, as it should show.
    r.loss_allowed = !bed.secured();
    bed.begin();
    bed.attacker().rr_alter = [](std::vector<std::uint8_t>& f) {
      std::uint16_t s = static_cast<std::uint16_t>(load_be16(&f[kSomeip + 10]) + 1);
      if (s == 0) s = 1;
      store_be16(&f[kSomeip + 10], s);
    };
    for (std::uint64_t i = 0; i < n; ++i) {
      (void)bed.rr_request(true);
      (void)bed.rr_request(false);
      bed.sim().run_for(Duration::milliseconds(2));
    }
    bed.sim().run_for(kSettle);
    r.attempts = bed.attacker().altered;
    bed.end(r);
    // The second call's own response, arriving after the forgery was
    // delivered in its place (unsecured), is late: not an attempt.
    r.rejected.erase("someip_late_responses");
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = make_row(info, "A2.rr.response-to-other-client",
                           "the response's client id changed to another client's (0x00ff)");
    bed.begin();
    bed.attacker().rr_alter = [](std::vector<std::uint8_t>& f) { store_be16(&f[kSomeip + 8], 0x00FF); };
    for (std::uint64_t i = 0; i < n; ++i) {
      (void)bed.rr_request(true);
      bed.sim().run_for(Duration::milliseconds(1));
      (void)bed.rr_request(false);
      bed.sim().run_for(Duration::milliseconds(1));
    }
    bed.sim().run_for(kSettle);
    r.attempts = bed.attacker().altered;
    bed.end(r);
    rows.push_back(std::move(r));
  }
  {
    AttackRow r = make_row(info, "A2.rr.event-to-response",
                           "a notification relabelled as the response to a pending call (its real response dropped)");
    bed.begin();
    bed.attacker().rr_drop = true;
    for (std::uint64_t i = 0; i < n; ++i) {
      bed.send_legit();
      bed.sim().run_for(Duration::milliseconds(1));
      std::vector<std::uint8_t> f = bed.attacker().last;
      require(f.size() >= kPayload && bed.attacker().last_request.size() >= kPayload, "event-to-response frames");
      const std::uint16_t session = bed.rr_request(true);
      bed.sim().run_for(Duration::microseconds(200));  // the request passes the switch
      // To the port the call went out from (the request's source port).
      store_be16(&f[36], load_be16(&bed.attacker().last_request[34]));
      store_be16(&f[kSomeip + 2], kRrMethod);
      store_be16(&f[kSomeip + 8], L::subscriber_client_id(0));
      store_be16(&f[kSomeip + 10], session);
      f[kSomeip + 14] = 0x80;
      net::refresh_checksums(f);
      bed.inject(f);
      bed.sim().run_for(Duration::milliseconds(1));
    }
    bed.sim().run_for(kSettle);
    r.attempts = n;
    bed.end(r);
    rows.push_back(std::move(r));
  }
}

}  // namespace layersec::attack::someip_bed
