#include "layersec/secoc/simulation.h"

#include <stdexcept>

namespace layersec::secoc {

namespace {
std::uint32_t capped_window(const LinkOptions& o) {
  if (!o.profile.freshness.has_freshness()) return o.window;
  const unsigned lsb = o.profile.freshness.msg_lower_bits();
  if (lsb >= 32) return o.window;
  const std::uint64_t cap = o.mode == FreshnessMode::kStrict ? (std::uint64_t{1} << lsb)
                                                             : (std::uint64_t{1} << (lsb - 1));
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(o.window, cap));
}
}  // namespace

EngineConfig link_sender_config(const LinkOptions& o) {
  EngineConfig c;
  c.sender_id = 7;
  c.key_groups = {{"pdu", o.profile.algorithm}, {"sync", AuthAlgorithm::kCmacAes128}};
  c.sync_tx.enabled = true;
  c.sync_tx.data_id = o.sync_data_id;
  c.sync_tx.key_group = 1;
  c.sync_tx.auth_info_tx_length = 64;
  c.sync_tx.period = o.sync_period;
  TxPduConfig t;
  t.id = 0;
  t.data_id = o.pdu_data_id;
  t.profile = o.profile;
  t.key_group = 0;
  c.tx_pdus = {t};
  return c;
}

EngineConfig link_receiver_config(const LinkOptions& o) {
  EngineConfig c;
  c.sender_id = 9;
  c.key_groups = {{"pdu", o.profile.algorithm}, {"sync", AuthAlgorithm::kCmacAes128}};
  c.sync_rx = {{0, o.sync_data_id, 1, 64}};
  RxPduConfig r;
  r.id = 0;
  r.data_id = o.pdu_data_id;
  r.profile = o.profile;
  r.key_group = 0;
  r.mode = o.mode;
  r.window = capped_window(o);
  r.verify_attempts = o.verify_attempts;
  r.sync_channel = 0;
  r.has_sync_channel = true;
  r.sender_id = 7;
  c.rx_pdus = {r};
  return c;
}

SecretBytes test_key(AuthAlgorithm a, std::uint32_t key_id) {
  SecretBytes k(key_size(a));
  for (std::size_t i = 0; i < k.size(); ++i)
    k[i] = static_cast<std::uint8_t>(0x40 + i * 7 + key_id * 31);
  return k;
}

SimulatedLink::SimulatedLink(const LinkOptions& o) : o_(o) {
  auto tx = Engine::start(link_sender_config(o), tx_store_);
  auto rx = Engine::start(link_receiver_config(o), rx_store_);
  if (!tx.ok() || !rx.ok()) throw std::runtime_error("SimulatedLink: engine start failed");
  tx_ = std::move(tx).value();
  rx_ = std::move(rx).value();
  for (Engine* e : {tx_.get(), rx_.get()}) {
    if (!e->install_key(0, 1, test_key(o.profile.algorithm, 1), now_).ok() ||
        !e->install_key(1, 1, test_key(AuthAlgorithm::kCmacAes128, 1), now_).ok())
      throw std::runtime_error("SimulatedLink: key installation failed");
  }
  sync_buf_.resize(tx_->sync_message_size());
  advance(Duration::zero());
}

int SimulatedLink::advance(Duration d, bool deliver_sync) {
  now_ += d;
  auto r = tx_->poll(now_, sync_buf_);
  if (!r.ok()) throw std::runtime_error("SimulatedLink: poll failed");
  if (r->sync_bytes == 0) return 0;
  if (deliver_sync) {
    auto st = rx_->handle_sync(0, ByteSpan(sync_buf_.data(), r->sync_bytes), now_);
    if (!st.ok()) throw std::runtime_error("SimulatedLink: sync rejected");
  }
  return 1;
}

std::vector<std::uint8_t> SimulatedLink::send(ByteSpan payload) {
  std::vector<std::uint8_t> out(o_.profile.secured_size(payload.size()));
  TxInput in;
  in.now = now_;
  auto r = tx_->protect(0, payload, out, in);
  if (!r.ok()) throw std::runtime_error("SimulatedLink: protect failed");
  out.resize(*r);
  return out;
}

Result<std::size_t, Rejection> SimulatedLink::receive(ByteSpan secured, std::vector<std::uint8_t>& out) {
  out.resize(secured.size());
  RxInput in;
  in.now = now_;
  return rx_->verify(0, secured, out, in);
}

void SimulatedLink::restart_sender() {
  tx_.reset();  // crash: nothing is flushed
  auto tx = Engine::start(link_sender_config(o_), tx_store_);
  if (!tx.ok()) throw std::runtime_error("SimulatedLink: restart failed");
  tx_ = std::move(tx).value();
  if (!tx_->install_key(0, 1, test_key(o_.profile.algorithm, 1), now_).ok() ||
      !tx_->install_key(1, 1, test_key(AuthAlgorithm::kCmacAes128, 1), now_).ok())
    throw std::runtime_error("SimulatedLink: key installation failed");
}

ResyncReport measure_burst_resync(const LinkOptions& o, Duration pdu_interval, std::uint32_t burst,
                                  int trials) {
  ResyncReport rep;
  rep.trials = trials;
  std::int64_t total_ns = 0;
  const std::uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<std::uint8_t> out;
  for (int t = 0; t < trials; ++t) {
    SimulatedLink link(o);
    // Warm-up of two sync periods plus a phase offset spread over one period.
    const std::int64_t steps_per_period = o.sync_period.ns() / pdu_interval.ns();
    const std::int64_t warm = 2 * steps_per_period + (steps_per_period * t) / std::max(1, trials);
    for (std::int64_t i = 0; i < warm; ++i) {
      link.advance(pdu_interval);
      auto w = link.send(payload);
      auto r = link.receive(w, out);
      if (!r.ok()) throw std::runtime_error("measure_burst_resync: warm-up rejected");
    }
    for (std::uint32_t i = 0; i < burst; ++i) {
      link.advance(pdu_interval);
      (void)link.send(payload);  // lost
    }
    const std::int64_t limit = 4 * steps_per_period + 4;
    bool recovered = false;
    TimePoint first_after{};
    for (std::int64_t i = 0; i < limit; ++i) {
      link.advance(pdu_interval);
      if (i == 0) first_after = link.now();
      auto w = link.send(payload);
      auto r = link.receive(w, out);
      if (r.ok()) {
        const Duration d = link.now() - first_after;
        rep.min = std::min(rep.min, d);
        rep.max = std::max(rep.max, d);
        total_ns += d.ns();
        ++rep.recovered;
        recovered = true;
        break;
      }
      ++rep.rejected_after_burst;
    }
    (void)recovered;
  }
  if (rep.recovered) rep.mean = Duration::nanoseconds(total_ns / rep.recovered);
  return rep;
}

}  // namespace layersec::secoc
