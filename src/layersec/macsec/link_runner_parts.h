// Internal to the `layersec macsec up` runners (link_runner.cc with static
// SAKs, link_mka_runner.cc with MKA): the pieces both use around the loop.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "layersec/macsec/link.h"
#include "layersec/macsec/link_config.h"
#include "layersec/macsec/link_runner.h"
#include "layersec/macsec/lower_guard.h"
#include "layersec/macsec/pn_state_file.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/io.h"

namespace layersec::macsec {
class LinkPtp;
}  // namespace layersec::macsec

namespace layersec::macsec::runner {

// The link's statistics (link.h stats_json) with "event", "interface",
// "lower", "mtu", "sci", with TSN "tsn" and with gPTP "ptp".
nlohmann::json report(const MacsecLink& link, const TapLink& tap, Sci sci, const char* event,
                      const LinkPtp* ptp = nullptr);

// Isolates the lower interface (lower_guard.h) and says what it did on
// stderr; `allow_mka` lets EAPOL-MKA to the PAE group address through.
LowerLinkGuard guard_lower(const LinkRunOptions& o, const LinkConfig& config, bool allow_mka = false);

// Restores the lower interface at exit and records the outcome in
// `exit_report` ("lower_link_restored").
void unguard_lower(LowerLinkGuard& guard, nlohmann::json& exit_report);

// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread and returns a
// signalfd that reads them.
// The {"event": "new_sa_needed", ...} line on stdout (the hook for key
// agreement: install an SA at another AN and SIGHUP).
void print_new_sa_needed(std::uint8_t encoding_an, const TxSaStatus& st);

net::UniqueFd block_signals();

// Watches the signalfd: SIGHUP calls `on_hup`, SIGINT/SIGTERM stop the loop.
void watch_signals(net::EventLoop& loop, const net::UniqueFd& sfd, std::function<void()> on_hup);

// The PN state file of `config`: opened, or created when it is missing and
// the operator said the keys are new (--new-key, or "new_key" on every SA).
// Throws std::runtime_error ("/pn_state_file: ...") otherwise. Also used by
// `layersec node` for the raw transport's SecY.
FilePnStore open_pn_store(const LinkConfig& config, bool new_key);

// With o.realtime_priority > 0: mlockall and SCHED_FIFO for the calling
// thread (net::enter_realtime), one line on stderr saying what took effect
// or why not (the link goes on without them).
void enter_link_realtime(const LinkRunOptions& o);

// The MAC the link's frames carry: the configured one or the lower's.
net::MacAddress link_mac(const LinkConfig& config, const std::string& lower);

}  // namespace layersec::macsec::runner
