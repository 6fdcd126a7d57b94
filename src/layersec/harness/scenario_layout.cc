#include "layersec/harness/scenario_layout.h"

namespace layersec::harness::layout {

namespace {
constexpr std::uint16_t kSyncAuthInfoBits = 64;
// The paper's scenarios provision the receivers' freshness (the testbed runs
// no sync messages) and measure latency, as the paper did: their sync
// channels are explicitly without a time bound (maxAge 0). The time bound,
// protected SD and the other defaults of issue 13 are exercised by the
// SecOC/SOME-IP attack tests and `layersec node`.
secoc::SyncRxConfig sync_channel(std::uint32_t id, std::uint16_t data_id) {
  return {id, data_id, 0, kSyncAuthInfoBits, Duration::seconds(1), Duration::zero()};
}
}  // namespace

secoc::EngineConfig publisher_engine_config(int subscribers) {
  const secoc::PduProfile profile = secoc::PduProfile::vendor();
  secoc::EngineConfig pe;
  pe.sender_id = kPublisherSenderId;
  pe.key_groups = {{"session", secoc::AuthAlgorithm::kCmacAes256}};
  pe.tx_pdus = {{0, kEventDataId, profile, 0}};
  for (int i = 0; i < subscribers; ++i) {
    secoc::RxPduConfig r;
    r.id = static_cast<std::uint32_t>(i);
    r.data_id = static_cast<std::uint16_t>(kAnswerDataIdBase + i);
    r.profile = profile;
    r.key_group = 0;
    r.sender_id = subscriber_client_id(i);
    r.sync_channel = static_cast<std::uint32_t>(i);
    r.has_sync_channel = true;
    pe.sync_rx.push_back(sync_channel(static_cast<std::uint32_t>(i), static_cast<std::uint16_t>(kSyncDataIdBase + 1 + i)));
    pe.rx_pdus.push_back(r);
  }
  return pe;
}

secoc::EngineConfig subscriber_engine_config(int i) {
  const secoc::PduProfile profile = secoc::PduProfile::vendor();
  secoc::EngineConfig se;
  se.sender_id = subscriber_client_id(i);
  se.key_groups = {{"session", secoc::AuthAlgorithm::kCmacAes256}};
  se.tx_pdus = {{0, static_cast<std::uint16_t>(kAnswerDataIdBase + i), profile, 0}};
  secoc::RxPduConfig r;
  r.id = 0;
  r.data_id = kEventDataId;
  r.profile = profile;
  r.key_group = 0;
  r.sender_id = kPublisherSenderId;
  r.sync_channel = 0;
  r.has_sync_channel = true;
  se.sync_rx = {sync_channel(0, kSyncDataIdBase)};
  se.rx_pdus = {r};
  return se;
}

someip::SecocBindings publisher_bindings(int subscribers) {
  someip::SecocBindings b;
  b.sd_unprotected = true;  // the paper's setup: SD in clear (explicit; see above)
  b.messages.push_back({kService, kInstance, kEvent, 0u, std::nullopt});
  for (int i = 0; i < subscribers; ++i)
    b.messages.push_back({kService, kInstance, answer_method(i), std::nullopt, static_cast<std::uint32_t>(i)});
  return b;
}

someip::SecocBindings subscriber_bindings(int i) {
  someip::SecocBindings b;
  b.sd_unprotected = true;  // the paper's setup: SD in clear (explicit; see above)
  b.messages.push_back({kService, kInstance, kEvent, std::nullopt, 0u});
  b.messages.push_back({kService, kInstance, answer_method(i), 0u, std::nullopt});
  return b;
}

}  // namespace layersec::harness::layout
