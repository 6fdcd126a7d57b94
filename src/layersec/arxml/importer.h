// `layersec config import-arxml`: an ARXML file's SecOC ECU configuration
// and SOME/IP service deployment as a layersec node configuration
// (docs/node.md) and its SecOC engine configuration (docs/secoc.md). The
// mapping, what is refused and why, and the options: docs/arxml.md.
//
// Sans-I/O: text in, JSON out. Key files are named (keys/<group>.key), never
// made: the keys of a segment come from its key management, not from here.
//
// What AUTOSAR leaves to the freshness value manager (a CDD outside the SecOC
// module) comes from the options: with counter freshness, the sync messages'
// DataIds and the SOME/IP event that carries them (docs/secoc.md, "Sync
// message"); nothing is guessed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/arxml/document.h"

namespace layersec::arxml {

struct ImportOptions {
  std::optional<std::string> unicast;  // the node's address (default: the machine mapping's)
  std::string name;                    // diagnostics name (default: the machine's SHORT-NAME)
  // Counter freshness (any PDU with a freshness value and no timestamp):
  // DataIds of the sync messages this node sends / accepts (the peer's
  // syncTx DataId), and the event that carries them.
  std::optional<std::uint16_t> sync_tx_data_id;
  std::optional<std::uint16_t> sync_rx_data_id;
  std::uint16_t sync_service = 0x5EC0;
  std::uint16_t sync_instance = 1;
  std::uint16_t sync_event = 0x8FFF;
  std::uint16_t sync_port = 30510;
  // The key group protecting SOME/IP-SD when there are several.
  std::string sd_key_group;
  std::string key_dir = "keys";  // key files: key_dir/<group>.key
  std::string state_file;        // default: <name>.secoc-state
};

struct ImportResult {
  nlohmann::json node;   // the layersec node configuration
  nlohmann::json secoc;  // the engine configuration alone (null without SecOC)
  std::vector<ImportNote> notes;  // PDU ids and key files assigned, values ignored
  std::vector<std::string> key_files;  // relative to the node file, one per key group
};

// Throws ArxmlError naming the ARXML path (or the option) at fault; the
// engine part is validated by the engine's loader and the SOME/IP part by the
// node's, and their errors come back with the ARXML path of the PDU.
[[nodiscard]] ImportResult import_arxml(std::string_view text, const ImportOptions& options);

}  // namespace layersec::arxml
