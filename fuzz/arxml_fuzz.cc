// Fuzz target: the ARXML importer (arxml/importer.h, `layersec config
// import-arxml`): pugixml's parse, the SHORT-NAME index, the SecOC ECUC,
// Csm and EcuC readers, the SOME/IP deployment reader and the validation of
// the result by the engine's and the node's loaders. The input is the ARXML
// text. Property: every input is refused with ArxmlError (naming a path) or
// yields a node configuration whose engine part the SecOC loader accepts;
// any other exception, a crash or a sanitizer report is a finding. The
// import is deterministic: a second run gives the same JSON.
// fuzz-iterations: 5000
#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "layersec/arxml/importer.h"
#include "layersec/secoc/config.h"

using namespace layersec;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  arxml::ImportOptions o;
  o.sync_tx_data_id = 65001;
  o.sync_rx_data_id = 65002;
  o.sd_key_group = "pair";
  try {
    const auto r = arxml::import_arxml(text, o);
    fuzz::require(r.node.contains("unicast"));
    if (!r.secoc.is_null()) (void)secoc::config_from_json(r.secoc);
    const auto again = arxml::import_arxml(text, o);
    fuzz::require(again.node == r.node && again.secoc == r.secoc);
  } catch (const arxml::ArxmlError& e) {
    fuzz::require(!e.path().empty());
  }
  return 0;
}
