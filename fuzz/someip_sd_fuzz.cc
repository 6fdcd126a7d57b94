// Fuzz target: SOME/IP-SD payload parser and the SD state machines.
// Properties: no crash; a payload that parses re-serialises (write_sd_payload)
// into bytes that parse to equal entries and options; feeding the input to a
// ServiceDiscovery with a server and a client never crashes, keeps its
// tables bounded and keeps the sender binding: every subscription's endpoints
// and the client's offered endpoints are the address of the SD peer they came
// from, and with allowlists set, input from a host not listed binds nothing.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "layersec/someip/sd_message.h"
#include "layersec/someip/service_discovery.h"

namespace {
using namespace layersec;
using namespace layersec::someip;

void check(bool c) {
  if (!c) std::abort();
}

struct Decoded {
  std::uint8_t flags = 0;
  std::vector<SdEntry> entries;
  std::vector<SdOption> options;
};

Decoded decode(const SdMessageView& v) {
  Decoded d;
  d.flags = v.flags();
  for (std::size_t i = 0; i < v.entry_count(); ++i) d.entries.push_back(v.entry(i));
  for (std::size_t i = 0; i < v.option_count(); ++i) d.options.push_back(v.option(i));
  return d;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteSpan in(data, size);
  auto v = parse_sd_payload(in);
  if (v) {
    const Decoded d = decode(*v);
    std::vector<std::uint8_t> buf(size + 16);
    ByteWriter w(buf);
    check(write_sd_payload(w, d.flags, d.entries, d.options));
    auto again = parse_sd_payload(w.written());
    check(again.ok());
    const Decoded d2 = decode(*again);
    check(d2.flags == d.flags);
    check(d2.entries == d.entries);
    check(d2.options.size() == d.options.size());
    for (std::size_t i = 0; i < d.options.size(); ++i) check(d2.options[i] == d.options[i]);
  }

  // Wrap the input as an SD message and drive the state machines with it.
  std::vector<std::uint8_t> msg(kHeaderSize + size);
  ByteWriter mw(msg);
  check(write_message(mw, sd_header(size > 0 ? data[0] : 1), in));
  SeededRandom rnd(size);
  const Endpoint group{IpAddress::v4(224, 224, 224, 245), kSdPort, L4Proto::kUdp};
  const Endpoint local{IpAddress::v4(10, 0, 0, 1), kSdPort, L4Proto::kUdp};
  const Endpoint peer{IpAddress::v4(10, 0, 0, 2), kSdPort, L4Proto::kUdp};
  ServiceDiscovery sd(SdConfig{local, group}, rnd);
  SdServerConfig sc;
  sc.service_id = 0x1234;
  sc.instance_id = 1;
  sc.udp_endpoint = Endpoint{local.address, 30509, L4Proto::kUdp};
  sc.eventgroups.push_back({0x10, std::nullopt});
  sc.max_subscribers = 4;
  sc.timing.initial_delay_max = Duration::zero();
  auto& server = sd.add_server(sc);
  SdClientConfig cc;
  cc.service_id = 0x1234;
  cc.udp_endpoint = Endpoint{local.address, 40000, L4Proto::kUdp};
  cc.eventgroups = {0x10};
  auto& client = sd.add_client(cc);
  SdActions out;
  TimePoint now = TimePoint::from_ns(0);
  sd.start_offer(now, server);
  sd.request(now, client, out);
  sd.on_timer(now, out);
  for (int round = 0; round < 3; ++round) {
    now += Duration::milliseconds(700);
    sd.on_datagram(now, msg, peer, round % 2 == 0, out);
    sd.on_datagram(now, in, peer, true, out);
    sd.on_timer(now, out);
  }
  check(server.subscriptions().size() <= sc.max_subscribers);
  auto bound_to_sender = [](const SdSubscription& s) {
    return (!s.udp || s.udp->address == s.peer.address) && (!s.tcp || s.tcp->address == s.peer.address);
  };
  for (const auto& s : server.subscriptions()) check(bound_to_sender(s));
  if (const auto& o = client.offer()) {
    check(!o->udp || o->udp->address == o->peer.address);
    check(!o->tcp || o->tcp->address == o->peer.address);
  }

  // The same input from a host outside both allowlists binds nothing.
  const Endpoint stranger{IpAddress::v4(10, 0, 0, 9), kSdPort, L4Proto::kUdp};
  ServiceDiscovery pinned(SdConfig{local, group}, rnd);
  sc.eventgroups[0].allowed_subscribers = {peer.address};
  cc.allowed_servers = {peer.address};
  auto& pserver = pinned.add_server(sc);
  auto& pclient = pinned.add_client(cc);
  pinned.start_offer(now, pserver);
  pinned.request(now, pclient, out);
  pinned.on_timer(now, out);
  for (int round = 0; round < 3; ++round) {
    now += Duration::milliseconds(700);
    pinned.on_datagram(now, msg, stranger, round % 2 == 0, out);
    pinned.on_datagram(now, in, stranger, true, out);
    pinned.on_timer(now, out);
  }
  check(pserver.subscriptions().empty());
  check(!pclient.available());

  for (const auto& d : out.datagrams) {
    auto m = parse_message(d.bytes);
    check(m.ok());
    check(parse_sd_message(*m).ok());
  }
  return 0;
}
