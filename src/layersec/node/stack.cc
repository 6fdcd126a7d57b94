// The node builder (stack.h): the one place a node's parts are constructed.
#include "layersec/node/stack.h"

#include <stdexcept>
#include <type_traits>
#include <utility>

#include "layersec/macsec/link.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/sim_host.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/sim_transport.h"
#include "layersec/someip/socket_transport.h"

namespace layersec::node {
namespace {

void check_sa(Status<macsec::SaError> st, const std::string& what) {
  if (st.ok()) return;
  BuildFailure f;
  f.stage = BuildStage::kMacsec;
  f.macsec_error = st.error();
  throw BuildError(std::move(f), "MACsec " + what + ": " + std::string(macsec::to_string(st.error())));
}

}  // namespace

MacsecSpec hop_macsec_spec(macsec::Sci self, macsec::Sci peer, const SecretBytes& tx_key, const SecretBytes& rx_key,
                           std::string peer_name) {
  MacsecSpec m;
  m.sci = self;
  m.suite = macsec::CipherSuite::kGcmAes128;
  m.tx_key = tx_key.clone();
  m.peers.push_back({peer, rx_key.clone(), std::move(peer_name)});
  m.fresh_key = true;  // hop keys are made per build by the testbed and the attack harness
  return m;
}

macsec::SecY make_secy(const MacsecSpec& spec) {
  macsec::SecYConfig c;
  c.sci = spec.sci;
  c.suite = spec.suite;
  c.vlan_mode = spec.vlan_mode;
  c.clear_tags_in_icv = spec.clear_tags_in_icv;
  if (!spec.pn_store && !spec.fresh_key) {
    BuildFailure f;
    f.stage = BuildStage::kMacsec;
    throw BuildError(std::move(f),
                     "MACsec: a SAK without a PN store would start at PN 1 again after a restart (GCM nonce reuse); "
                     "give the spec a pn_store, or set fresh_key for SAKs made for this build only");
  }
  macsec::SecY secy(c);
  if (spec.pn_store) secy.set_pn_store(spec.pn_store, std::max<std::uint64_t>(spec.pn_reserve_block, 1));
  const auto start = spec.new_key ? macsec::PnStart::kNewKey : macsec::PnStart::kResume;
  check_sa(secy.install_tx_sa(0, macsec::SaKeys{spec.tx_key.span()}, 1, start), "Tx SA");
  check_sa(secy.set_encoding_sa(0), "encoding SA");
  for (const auto& p : spec.peers) {
    const std::string of = p.name.empty() ? std::string() : " of " + p.name;
    check_sa(secy.add_rx_sc(p.sci), "Rx SC" + of);
    check_sa(secy.install_rx_sa(p.sci, 0, macsec::SaKeys{p.rx_key.span()}, 1, start), "Rx SA" + of);
  }
  return secy;
}

Stack::~Stack() = default;

TimePoint Stack::freshness_now() const {
  return freshness_clock_ ? freshness_clock_->now() : transport_->now();
}

Status<secoc::KeyError> Stack::install_key(std::uint32_t group, std::uint32_t key_id, const SecretBytes& key) {
  if (!engine_) throw std::logic_error("node stack: install_key without a SecOC engine");
  return engine_->install_key(group, key_id, key, freshness_now());
}

std::unique_ptr<Stack> build_stack(StackSpec spec) {
  std::unique_ptr<Stack> s(new Stack);

  if (spec.macsec && spec.secy) throw std::logic_error("node stack: both a MacsecSpec and a built SecY");
  if (spec.macsec) s->macsec_ = std::make_unique<macsec::MacsecLink>(make_secy(*spec.macsec));
  if (spec.secy) s->macsec_ = std::make_unique<macsec::MacsecLink>(std::move(*spec.secy));

  std::visit(
      [&](auto& t) {
        using T = std::decay_t<decltype(t)>;
        if constexpr (std::is_same_v<T, SocketTransportSpec>) {
          s->socket_ = std::make_unique<someip::SocketTransport>(*t.loop, t.address, t.device);
          s->transport_ = s->socket_.get();
        } else if constexpr (std::is_same_v<T, RawTransportSpec>) {
          if (s->macsec_) s->filter_ = std::make_unique<macsec::MacsecFilter>(*s->macsec_);
          if (t.tsn) {
            if (t.tsn_clock == nullptr) throw std::logic_error("node stack: a TSN first hop without a clock");
            tsn::FirstHopSettings settings = std::move(*t.tsn);
            settings.expansion_bytes = s->filter_ ? s->filter_->overhead() : 0;
            s->stage_ = std::make_unique<tsn::FirstHopStage>(std::move(settings), *t.tsn_clock, *t.loop);
          }
          int err = 0;
          auto raw = someip::RawTransport::open(*t.loop, t.config, s->filter_.get(), &err, s->stage_.get());
          if (!raw.ok()) {
            BuildFailure f;
            f.stage = BuildStage::kTransport;
            f.transport_error = raw.error();
            f.os_errno = err;
            throw BuildError(std::move(f), "raw transport on " + t.config.interface + ": " +
                                               std::string(someip::to_string(raw.error())));
          }
          s->raw_ = std::move(raw).value();
          s->transport_ = s->raw_.get();
        } else {
          s->sim_ = std::make_unique<someip::SimTransport>(*t.sim, *t.host);
          s->transport_ = s->sim_.get();
        }
      },
      spec.transport);

  s->random_ = std::make_unique<someip::SeededRandom>(spec.seed);
  try {
    s->runtime_ = std::make_unique<someip::Runtime>(std::move(spec.runtime), *s->transport_, *s->random_);
  } catch (const std::invalid_argument& e) {
    BuildFailure f;
    f.stage = BuildStage::kRuntime;
    throw BuildError(std::move(f), e.what());
  }

  if (!spec.secoc) return s;
  SecocSpec& sc = *spec.secoc;
  s->freshness_clock_ = sc.freshness_clock;
  secoc::FileStateStore* file = nullptr;
  if (sc.state_file.empty()) {
    s->store_ = std::make_unique<secoc::MemoryStateStore>();
  } else {
    auto f = std::make_unique<secoc::FileStateStore>(sc.state_file);
    file = f.get();
    s->store_ = std::move(f);
  }
  secoc::StartOptions so;
  so.first_start = sc.first_start;
  if (sc.freshness_clock) so.now = sc.freshness_clock->now();
  auto started = secoc::Engine::start(std::move(sc.engine), *s->store_, so);
  if (!started) {
    BuildFailure f;
    f.stage = BuildStage::kSecocStart;
    f.start_error = started.error();
    if (file) f.store_error = file->last_error();
    throw BuildError(std::move(f), "SecOC engine did not start: " + std::string(secoc::to_string(started.error())));
  }
  s->engine_ = std::move(started).value();
  if (sc.on_started) sc.on_started(*s->engine_);

  for (std::size_t i = 0; i < sc.keys.size(); ++i) {
    KeySpec& k = sc.keys[i];
    auto st = s->install_key(k.group, k.key_id, k.key);
    k.key.clear();  // the engine holds its own copy in its contexts
    if (!st.ok()) {
      for (auto& rest : sc.keys) rest.key.clear();
      BuildFailure f;
      f.stage = BuildStage::kSecocKey;
      f.key_index = i;
      f.key_error = st.error();
      throw BuildError(std::move(f), "key group " + std::to_string(k.group) + " key id " + std::to_string(k.key_id) +
                                         ": " + std::string(secoc::to_string(st.error())));
    }
  }

  try {
    s->runtime_->attach_secoc(*s->engine_, std::move(sc.bindings), sc.freshness_clock);
  } catch (const std::invalid_argument& e) {
    BuildFailure f;
    f.stage = BuildStage::kSecocBindings;
    throw BuildError(std::move(f), e.what());
  }
  return s;
}

}  // namespace layersec::node
