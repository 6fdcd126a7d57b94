#include "layersec/macsec/link_runner_time.h"

#include <iostream>
#include <utility>

#include <nlohmann/json.hpp>

#include "layersec/ptp/raw_clock.h"

namespace layersec::macsec::runner {

void apply_tsn_layout(const std::optional<LinkTsnConfig>& tsn, SecYConfig& secy, TapLinkOptions& tap) {
  if (!tsn) return;
  secy.vlan_mode = tsn->layout;
  secy.clear_tags_in_icv = tsn->clear_tags_in_icv;
  tap.extra_overhead = 4;
}

LinkTime::LinkTime(MacsecLink& link, TapLink& tap, const LinkRunOptions& o, const std::optional<LinkTsnConfig>& tsn,
                   const std::optional<LinkPtpConfig>& ptp)
    : tap_(tap), options_(o), tsn_(tsn), ptp_config_(ptp) {
  // gPTP beside the SecY: it sees every lower-link frame first (link_ptp.h).
  if (ptp) {
    ptp_ = std::make_unique<LinkPtp>(*ptp, link, o.lower, tap.mac());
    tap.set_frame_hook(ptp_.get());
    gptp_time_ = std::make_unique<SyncedShaperClock>(ptp_->clock(), [] { return ptp::raw_now_ns(); });
  }
  // The shaper's clock: the gPTP-disciplined layersec clock when this link
  // runs gPTP, else CLOCK_TAI.
  if (tsn) tap.enable_tsn(*tsn, gptp_time_ ? static_cast<const tsn::Clock&>(*gptp_time_) : tai_);
}

LinkTime::~LinkTime() { detach(); }

void LinkTime::describe(std::ostream& os) const {
  if (tsn_) {
    os << "  tsn " << macsec::describe(*tsn_) << " (" << options_.tsn_path << ", "
       << (ptp_ ? "gPTP time: the clock --ptp disciplines" : "CLOCK_TAI") << ")\n";
  }
  if (ptp_) {
    const auto& ts = ptp_->timestamping();
    os << "  ptp " << macsec::describe(*ptp_config_) << " (" << options_.ptp_path << "), software timestamps tx "
       << (ts.software_tx ? "yes" : "no") << " rx " << (ts.software_rx ? "yes" : "no") << "\n";
  }
}

void LinkTime::attach(net::EventLoop& loop) {
  if (!ptp_) return;
  loop_ = &loop;
  ptp_->on_clock_step([this] { tap_.clock_stepped(); });
  ptp_->attach(loop);
  second_timer_ = loop.add_timer_in(Duration::seconds(1), [this] { second(); });
}

void LinkTime::second() {
  nlohmann::json j = ptp_->second_json();
  j["event"] = "ptp";
  std::cout << j.dump() << std::endl;
  second_timer_ = loop_->add_timer_in(Duration::seconds(1), [this] { second(); });
}

void LinkTime::detach() {
  if (ptp_) ptp_->detach();
  if (loop_ && second_timer_) loop_->cancel_timer(*second_timer_);
  second_timer_.reset();
  loop_ = nullptr;
}

}  // namespace layersec::macsec::runner
