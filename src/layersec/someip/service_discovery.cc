#include "layersec/someip/service_discovery.h"

#include <utility>

namespace layersec::someip {

ServiceDiscovery::ServiceDiscovery(SdConfig config, RandomSource& random)
    : config_(config), random_(&random), endpoint_(config.max_peers) {}

SdServer& ServiceDiscovery::add_server(SdServerConfig c) {
  return servers_.emplace_back(std::move(c), *random_);
}

SdClient& ServiceDiscovery::add_client(SdClientConfig c) {
  return clients_.emplace_back(std::move(c), *random_);
}

void ServiceDiscovery::stop_offer(TimePoint now, SdServer& s, SdActions& out) {
  s.stop(now, pending_);
  flush(out);
}

void ServiceDiscovery::request(TimePoint now, SdClient& c, SdActions& out) {
  c.request(now, pending_);
  flush(out);
}

void ServiceDiscovery::release(TimePoint now, SdClient& c, SdActions& out) {
  c.release(now, pending_);
  flush(out);
}

void ServiceDiscovery::on_datagram(TimePoint now, ByteSpan datagram, const Endpoint& source,
                                   bool via_multicast, SdActions& out) {
  ++counters_.received;
  if (source == config_.local) {
    ++counters_.own;
    return;
  }
  auto m = parse_message(datagram);
  if (!m) {
    ++counters_.rejected;
    ++counters_.not_someip;
    return;
  }
  auto sd = parse_sd_message(*m);
  if (!sd) {
    ++counters_.rejected;
    ++counters_.invalid_sd[static_cast<std::size_t>(sd.error()) % kSdErrorCount];
    return;
  }
  // Parse, then act: the whole message is valid before any state changes.
  const SdMessageView& v = *sd;
  if (endpoint_.observe(source, via_multicast, m->header.session_id, v.reboot())) {
    ++counters_.reboots;
    SdEvent ev;
    ev.kind = SdEventKind::kPeerRebooted;
    ev.peer = source;
    pending_.events.push_back(ev);
    for (auto& s : servers_) s.on_peer_reboot(source, pending_);
    for (auto& c : clients_) c.on_peer_reboot(source, pending_);
  }
  SdRxContext rx{now, source, via_multicast, v.unicast()};
  SdEntryOptions opts;
  for (std::size_t i = 0; i < v.entry_count(); ++i) {
    const SdEntry e = v.entry(i);
    const EntryKind k = e.kind();
    if (k == EntryKind::kUnknown) {
      ++counters_.unknown_entries;
      continue;
    }
    resolve_options(v, e, opts);
    const bool to_server = k == EntryKind::kFindService || k == EntryKind::kSubscribeEventgroup ||
                           k == EntryKind::kStopSubscribeEventgroup;
    bool matched = false;
    if (to_server) {
      for (auto& s : servers_) {
        if (!s.matches(e)) continue;
        matched = true;
        s.on_entry(rx, e, opts, pending_);
      }
    } else {
      for (auto& c : clients_) {
        if (!c.matches(e)) continue;
        matched = true;
        c.on_entry(rx, e, opts, pending_);
      }
    }
    if (!matched) ++counters_.unmatched_entries;
  }
  flush(out);
}

void ServiceDiscovery::on_timer(TimePoint now, SdActions& out) {
  for (auto& s : servers_) s.on_timer(now, pending_);
  for (auto& c : clients_) c.on_timer(now, pending_);
  flush(out);
}

TimePoint ServiceDiscovery::next_deadline() const {
  TimePoint t = TimePoint::max();
  for (const auto& s : servers_) t = std::min(t, s.next_deadline());
  for (const auto& c : clients_) t = std::min(t, c.next_deadline());
  return t;
}

void ServiceDiscovery::flush(SdActions& out) {
  // Group sends by destination, keeping first-appearance order.
  std::vector<bool> done(pending_.sends.size(), false);
  for (std::size_t i = 0; i < pending_.sends.size(); ++i) {
    if (done[i]) continue;
    const bool mc = pending_.sends[i].multicast;
    const Endpoint dest = mc ? config_.multicast_group : pending_.sends[i].destination;
    SdMessageBuilder b;
    auto emit = [&]() {
      if (b.empty()) return;
      const auto stamp = mc ? endpoint_.next_multicast() : endpoint_.next_unicast(dest);
      SdDatagram d;
      d.destination = dest;
      d.multicast = mc;
      d.bytes.resize(kHeaderSize + b.payload_size());
      ByteWriter w(d.bytes);
      if (b.write_message(w, stamp.session_id, stamp.flags) && w.size() == d.bytes.size()) {
        out.datagrams.push_back(std::move(d));
        ++counters_.sent;
      } else {
        ++counters_.unsent_datagrams;
      }
      b.clear();
    };
    for (std::size_t j = i; j < pending_.sends.size(); ++j) {
      if (done[j]) continue;
      const auto& s = pending_.sends[j];
      if (s.multicast != mc || (!mc && !(s.destination == dest))) continue;
      done[j] = true;
      SdMessageBuilder trial = b;
      if (!trial.add(s.entry, s.run1, s.run2)) {  // unencodable: dropped
        ++counters_.unsent_entries;
        continue;
      }
      if (trial.payload_size() > config_.max_payload && !b.empty()) {
        emit();
        if (!b.add(s.entry, s.run1, s.run2)) {
          ++counters_.unsent_entries;
          continue;
        }
      } else {
        b = std::move(trial);
      }
    }
    emit();
  }
  pending_.sends.clear();
  for (auto& e : pending_.events) out.events.push_back(std::move(e));
  pending_.events.clear();
  counters_.dropped += pending_.drops;
  pending_.drops = SdDropCounters{};
}

}  // namespace layersec::someip
