#include "layersec/macsec/link_mka.h"

#include <poll.h>

#include <stdexcept>
#include <utility>

#include "layersec/base/hex.h"
#include "layersec/net/io.h"

namespace layersec::macsec {
namespace {

std::string sci_hex(std::uint64_t sci) { return sci_text(Sci{sci}); }

std::string mi_hex(const mka::MemberId& mi) { return to_hex(ByteSpan(mi.data(), mi.size())); }

nlohmann::json sak_json(const mka::InstalledSak* k) {
  if (k == nullptr) return nullptr;
  return nlohmann::json{{"kn", k->ki.kn},
                        {"an", k->an},
                        {"key_server_mi", mi_hex(k->ki.mi)},
                        {"sak_fingerprint", k->fingerprint},
                        {"tx", k->tx},
                        {"rx", k->rx}};
}

}  // namespace

std::string_view drop_key(mka::DropReason r) {
  using R = mka::DropReason;
  switch (r) {
    case R::kNotStarted: return "not_started";
    case R::kMalformed: return "malformed";
    case R::kUnknownCkn: return "unknown_ckn";
    case R::kBadIcv: return "bad_icv";
    case R::kOwnMi: return "own_mi";
    case R::kOwnSci: return "own_sci";
    case R::kMiConflict: return "mi_conflict";
    case R::kReplayedMn: return "replayed_mn";
    case R::kStaleMn: return "stale_mn";
    case R::kPeerSciChanged: return "peer_sci_changed";
    case R::kSupersededMi: return "superseded_mi";
    case R::kPeerTableFull: return "peer_table_full";
    case R::kNotKeyServer: return "not_key_server";
    case R::kMacsecNotAdvised: return "macsec_not_advised";
    case R::kCipherSuiteMismatch: return "cipher_suite_mismatch";
    case R::kUnwrapFailed: return "unwrap_failed";
    case R::kStaleKeyNumber: return "stale_key_number";
    case R::kUnknownKeyNumber: return "unknown_key_number";
    case R::kAnInUse: return "an_in_use";
  }
  return "unknown";
}

std::string_view rekey_key(mka::RekeyReason r) {
  using R = mka::RekeyReason;
  switch (r) {
    case R::kNewKeyServer: return "new_key_server";
    case R::kMemberJoined: return "member_joined";
    case R::kMemberLeft: return "member_left";
    case R::kTimer: return "timer";
    case R::kPnThreshold: return "pn_threshold";
    case R::kOperator: return "operator";
  }
  return "unknown";
}

nlohmann::json mka_event_json(const mka::Event& e) {
  using T = mka::EventType;
  nlohmann::json j{{"event", "mka_" + std::string(mka::to_string(e.type))}, {"t_ns", e.at.ns()}};
  switch (e.type) {
    case T::kPeerPotential:
    case T::kPeerLive:
    case T::kPeerLost:
      j["sci"] = sci_hex(e.sci);
      j["mi"] = mi_hex(e.mi);
      if (e.loss) j["reason"] = std::string(mka::to_string(*e.loss));
      break;
    case T::kKeyServerElected:
      j["sci"] = sci_hex(e.sci);
      j["mi"] = mi_hex(e.mi);
      break;
    case T::kKeyServerNone:
      break;
    case T::kSakGenerated:
    case T::kSakInstalled:
    case T::kSakTransmitting:
    case T::kSakRetired:
      j["kn"] = e.ki.kn;
      j["an"] = e.an;
      j["key_server_mi"] = mi_hex(e.ki.mi);
      j["sak_fingerprint"] = e.sak_fingerprint;
      if (e.rekey) j["reason"] = std::string(rekey_key(*e.rekey));
      break;
    case T::kMiChanged:
      j["mi"] = mi_hex(e.mi);
      break;
    case T::kSecYError:
      j["an"] = e.an;
      if (e.error) j["error"] = std::string(mka::to_string(*e.error));
      break;
    case T::kRandomFailure:
      break;
  }
  return j;
}

nlohmann::json mka_stats_json(const mka::Participant& p, const LinkMkaCounters& socket) {
  nlohmann::json peers = nlohmann::json::array();
  for (const auto& pi : p.peers()) {
    peers.push_back({{"sci", sci_hex(pi.sci)},
                     {"mi", mi_hex(pi.mi)},
                     {"mn", pi.mn},
                     {"priority", pi.key_server_priority},
                     {"live", pi.live}});
  }
  nlohmann::json ks = nullptr;
  if (auto sci = p.key_server_sci()) ks = {{"sci", sci_hex(*sci)}, {"self", p.is_key_server()}};
  const mka::ParticipantStats& s = p.stats();
  nlohmann::json drops = nlohmann::json::object();
  for (std::size_t i = 0; i < mka::kDropReasonCount; ++i) {
    drops[std::string(drop_key(static_cast<mka::DropReason>(i)))] = s.drops[i];
  }
  nlohmann::json malformed = nlohmann::json::object();
  for (std::size_t i = 0; i < mka::kMkpduErrorCount; ++i) {
    if (s.malformed[i] != 0) malformed[std::string(mka::to_string(static_cast<mka::MkpduError>(i)))] = s.malformed[i];
  }
  nlohmann::json rekeys = nlohmann::json::object();
  for (std::size_t i = 0; i < mka::kRekeyReasonCount; ++i) {
    rekeys[std::string(rekey_key(static_cast<mka::RekeyReason>(i)))] = s.rekeys[i];
  }
  return nlohmann::json{
      {"state", std::string(mka::to_string(p.state()))},
      {"sci", sci_hex(p.config().sci)},
      {"mi", mi_hex(p.mi())},
      {"mn", p.mn()},
      {"priority", p.config().key_server_priority},
      {"cipher_suite", std::string(to_string(p.config().cipher_suite))},
      {"key_server", ks},
      {"peers", std::move(peers)},
      {"live_peers", p.live_peer_count()},
      {"sak",
       {{"state", std::string(mka::to_string(p.sak().state()))},
        {"latest", sak_json(p.sak().latest())},
        {"old", sak_json(p.sak().old())}}},
      {"counters",
       {{"mkpdus_received", s.mkpdus_received},
        {"mkpdus_accepted", s.mkpdus_accepted},
        {"mkpdus_sent", s.mkpdus_sent},
        {"immediate_mkpdus_sent", s.immediate_mkpdus_sent},
        {"unknown_parameter_sets", s.unknown_parameter_sets},
        {"peers_live", s.peers_live},
        {"peers_lost", s.peers_lost},
        {"potential_peers_expired", s.potential_peers_expired},
        {"saks_generated", s.saks_generated},
        {"saks_received", s.saks_received},
        {"saks_installed", s.saks_installed},
        {"mi_changes", s.mi_changes},
        {"secy_errors", s.secy_errors},
        {"encode_failures", s.encode_failures}}},
      {"drops", std::move(drops)},
      {"malformed", std::move(malformed)},
      {"rekeys", std::move(rekeys)},
      {"socket",
       {{"rx_frames", socket.rx_frames},
        {"rx_truncated", socket.rx_truncated},
        {"tx_frames", socket.tx_frames},
        {"tx_errors", socket.tx_errors},
        {"io_errors", socket.io_errors},
        {"timer_runs", socket.timer_runs},
        {"tx_pn_reports", socket.tx_pn_reports}}},
  };
}

// ------------------------------------------------------------------ LinkMka

LinkMka::LinkMka(net::PacketSocket socket, EventSink sink)
    : socket_(std::move(socket)), sink_(std::move(sink)), buf_(2048) {}

LinkMka::~LinkMka() { stop(); }

std::unique_ptr<LinkMka> LinkMka::open(MacsecLink& link, const LinkMkaConfig& config, const std::string& lower,
                                       EventSink sink) {
  int err = 0;
  auto sock = net::PacketSocket::open(lower, mka::kEapolEtherType, /*nonblocking=*/true, &err);
  if (!sock) {
    throw std::runtime_error("EAPOL socket (EtherType 888e) on " + lower + ": " +
                             (err != 0 ? net::errno_text(err) : std::string("failed")));
  }
  const net::MacAddress group{{mka::kPaeGroupAddress[0], mka::kPaeGroupAddress[1], mka::kPaeGroupAddress[2],
                               mka::kPaeGroupAddress[3], mka::kPaeGroupAddress[4], mka::kPaeGroupAddress[5]}};
  if (auto st = sock->add_multicast(group); !st) {
    throw std::runtime_error("join 01:80:c2:00:00:03 on " + lower + ": " + net::errno_text(sock->last_errno()));
  }
  std::unique_ptr<LinkMka> m(new LinkMka(std::move(*sock), std::move(sink)));
  mka::ParticipantConfig pc = config.participant;
  pc.sci = link.secy().config().sci.value;
  m->adapter_ = std::make_unique<mka::GatedSecYDriver>(link.secy());
  try {
    m->participant_ = std::make_unique<mka::Participant>(pc, config.cak.clone(), *m->adapter_, m->rng_);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--mka: ") + e.what());
  }
  return m;
}

void LinkMka::start(net::EventLoop& loop) {
  loop_ = &loop;
  loop.watch(socket_.fd(), POLLIN, [this](short) { pump(); });
  handle(participant_->start(loop.now()));
  pn_timer_ = loop.add_timer_in(kTxPnPeriod, [this] { tx_pn_tick(); });
}

void LinkMka::stop() {
  if (loop_ == nullptr) return;
  net::EventLoop& loop = *loop_;
  loop.unwatch(socket_.fd());
  if (deadline_timer_) loop.cancel_timer(*deadline_timer_);
  if (pn_timer_) loop.cancel_timer(*pn_timer_);
  deadline_timer_.reset();
  pn_timer_.reset();
  mka::Output out = participant_->stop(loop.now());
  for (const auto& e : out.events) sink_(mka_event_json(e));
  loop_ = nullptr;
}

std::size_t LinkMka::pump(std::size_t budget) {
  std::size_t n = 0;
  while (n < budget && loop_ != nullptr) {
    auto r = socket_.receive(MutableByteSpan(buf_.data(), buf_.size()));
    if (!r) {
      if (r.error() == net::IoError::kTruncated) {
        ++counters_.rx_truncated;
        ++n;
        continue;
      }
      if (r.error() != net::IoError::kWouldBlock) ++counters_.io_errors;
      break;
    }
    ++n;
    ++counters_.rx_frames;
    mka::Output out = participant_->on_mkpdu(ByteSpan(buf_.data(), *r), loop_->now());
    if (out.dropped) {
      const auto i = static_cast<std::size_t>(*out.dropped);
      if (!drop_reported_[i]) {
        // The first of each reason only: a flood of bad MKPDUs is counted,
        // not printed.
        drop_reported_[i] = true;
        sink_(nlohmann::json{{"event", "mka_dropped"},
                             {"t_ns", loop_->now().ns()},
                             {"reason", std::string(drop_key(*out.dropped))},
                             {"detail", std::string(mka::to_string(*out.dropped))},
                             {"note", "first of its kind; later ones are only counted (stats: mka.drops)"}});
      }
    }
    handle(std::move(out));
  }
  return n;
}

bool LinkMka::rekey_now() {
  if (loop_ == nullptr) return false;
  auto out = participant_->rekey_now(loop_->now());
  if (!out) return false;
  handle(std::move(*out));
  return true;
}

void LinkMka::handle(mka::Output out) {
  for (const auto& f : out.frames) {
    auto sent = socket_.send(ByteSpan(f.data(), f.size()));
    sent.ok() ? ++counters_.tx_frames : ++counters_.tx_errors;
  }
  for (const auto& e : out.events) sink_(mka_event_json(e));
  arm();
}

void LinkMka::arm() {
  if (loop_ == nullptr) return;
  const TimePoint at = participant_->next_deadline();
  if (deadline_timer_ && at == armed_at_) return;
  if (deadline_timer_) loop_->cancel_timer(*deadline_timer_);
  deadline_timer_.reset();
  armed_at_ = at;
  if (at == TimePoint::max()) return;
  deadline_timer_ = loop_->add_timer(at, [this] {
    deadline_timer_.reset();
    ++counters_.timer_runs;
    handle(participant_->on_timer(loop_->now()));
  });
}

void LinkMka::tx_pn_tick() {
  if (loop_ == nullptr) return;
  if (const std::uint64_t pn = adapter_->encoding_next_pn(); pn != 0) {
    ++counters_.tx_pn_reports;
    handle(participant_->on_tx_pn(pn, loop_->now()));
  }
  pn_timer_ = loop_->add_timer_in(kTxPnPeriod, [this] { tx_pn_tick(); });
}

nlohmann::json LinkMka::stats_json() const { return mka_stats_json(*participant_, counters_); }

}  // namespace layersec::macsec
