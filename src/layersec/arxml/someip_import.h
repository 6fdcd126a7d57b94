// The SOME/IP service deployment of an ARXML file (AUTOSAR manifest
// elements) read into the `services` and `clients` of a layersec node
// configuration (docs/node.md; docs/arxml.md has the whole mapping):
//   SOMEIP-SERVICE-INTERFACE-DEPLOYMENT: SERVICE-INTERFACE-ID, -VERSION,
//     METHOD-DEPLOYMENTS (METHOD-ID; FIRE-AND-FORGET of the referenced
//     operation), EVENT-DEPLOYMENTS (EVENT-ID), FIELD-DEPLOYMENTS (GET, SET,
//     NOTIFIER), EVENT-GROUPS (EVENT-GROUP-ID, EVENT-REFS)
//   PROVIDED-SOMEIP-SERVICE-INSTANCE -> services[]: SERVICE-INSTANCE-ID,
//     PROVIDED-EVENT-GROUPS (MULTICAST-THRESHOLD, IPV-4-MULTICAST-IP-ADDRESS,
//     EVENT-MULTICAST-UDP-PORT)
//   REQUIRED-SOMEIP-SERVICE-INSTANCE -> clients[]: REQUIRED-SERVICE-INSTANCE-ID,
//     REQUIRED-EVENT-GROUPS
//   SOMEIP-SERVICE-INSTANCE-TO-MACHINE-MAPPING: UDP-PORT of the instances; the
//     node's unicast address from the connector's network endpoint.
// UDP only: a TCP transport or port is refused with its path, as is a field
// without a notifier or an event in no eventgroup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/arxml/document.h"

namespace layersec::arxml {

// At most this many methods, events, eventgroups and eventgroup members over
// the provided instances (each instance copies its deployment's): far more
// than one node offers, far less than a hostile file could multiply.
inline constexpr std::size_t kMaxEntries = 1u << 16;

struct SomeipImport {
  nlohmann::json services = nlohmann::json::array();  // node "services"
  nlohmann::json clients = nlohmann::json::array();   // node "clients"
  std::optional<std::string> unicast;  // the machine's IPv4 address, when mapped
  std::string machine;                 // the machine's SHORT-NAME, when known
  std::map<std::uint16_t, std::vector<std::uint16_t>> offered;  // service -> instances
  std::map<std::uint16_t, std::uint16_t> required;              // service -> instance
  std::vector<ImportNote> notes;
};

// Throws ArxmlError naming the ARXML path of the first unsupported or
// invalid element.
[[nodiscard]] SomeipImport import_someip(const Document& d);

}  // namespace layersec::arxml
