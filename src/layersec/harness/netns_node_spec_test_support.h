// Test support for the netns node's spec codec (netns_node_spec.h), shared by
// netns_node_spec_test.cc and netns_node_test.cc: the readers as values and
// a sample spec.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "layersec/harness/netns_node_spec.h"

namespace layersec::harness::netns_test {

using nlohmann::json;

// The readers throw NetnsJsonError; tests look at the outcome as a value.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string message;
  [[nodiscard]] bool ok() const { return value.has_value(); }
  [[nodiscard]] const std::string& error() const { return message; }
  T* operator->() { return &*value; }
  T& operator*() { return *value; }
};

inline Parsed<NetnsNodeSpec> parse_spec(const json& j) {
  try {
    return {node_spec_from_json(j), ""};
  } catch (const NetnsJsonError& e) {
    return {std::nullopt, e.what()};
  }
}

inline Parsed<NetnsNodeReport> parse_report(const json& j) {
  try {
    return {node_report_from_json(j), ""};
  } catch (const NetnsJsonError& e) {
    return {std::nullopt, e.what()};
  }
}


// A valid subscriber spec (raw, hybrid, psk, rate mode) with every field set.
inline NetnsNodeSpec sample_spec() {
  NetnsNodeSpec s;
  s.role = "subscriber";
  s.index = 1;
  s.subscribers = 3;
  s.path = LinkPath::kRaw;
  s.security = Security::kHybrid;
  s.keys = KeyDistribution::kPsk;
  s.multicast = true;
  s.payload_bytes = 128;
  s.interface = "eth0";
  s.ip = net::Ipv4Address::from_octets(10, 77, 0, 3);
  s.mac = *net::MacAddress::parse("02:aa:bb:cc:dd:03");
  s.peers = {{"publisher", net::Ipv4Address::from_octets(10, 77, 0, 1), *net::MacAddress::parse("02:aa:bb:cc:dd:01")},
             {"subscriber-1", net::Ipv4Address::from_octets(10, 77, 0, 2), *net::MacAddress::parse("02:aa:bb:cc:dd:02")}};
  s.publisher_ip = net::Ipv4Address::from_octets(10, 77, 0, 1);
  s.secoc_key_file = "/tmp/x/secoc.key";
  s.macsec_key_file = "/tmp/x/sak.key";
  s.mode = "rate";
  s.iterations = 7;
  s.warmup = 3;
  s.pacing = Duration::microseconds(250);
  s.timeout = Duration::milliseconds(300);
  s.rate_hz = 5000;
  s.rate_duration = Duration::milliseconds(1500);
  s.ready_timeout = Duration::seconds(9);
  s.report_file = "/tmp/x/report.json";
  return s;
}

}  // namespace layersec::harness::netns_test
