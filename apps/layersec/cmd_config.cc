// `layersec config import-arxml FILE.arxml --out DIR [options]`: reads the
// AUTOSAR SecOC ECU configuration and SOME/IP service deployment of FILE and
// writes DIR/node.json (a `layersec node` configuration, docs/node.md) and,
// when the file configures SecOC, DIR/secoc.json (the engine alone, for
// `layersec secoc describe --config`). The mapping: docs/arxml.md
// (src/layersec/arxml/importer.h).
//
// Exit status: 0 written; 2 the ARXML (or an option) is unsupported or
// invalid: one line naming the file, the ARXML path and the problem, nothing
// written; 1 the output could not be written.
//
// Key files are not made: the import lists the files node.json names
// (DIR/keys/<group>.key by default), to be provisioned with mode 0600.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli_checks.h"
#include "command.h"
#include "layersec/arxml/importer.h"
#include "layersec/base/file.h"

namespace layersec::app {
namespace {

struct Options {
  std::string file;
  std::string out;
  std::string unicast;
  std::string name;
  std::uint64_t sync_tx_data_id = 0x10000;  // 0x10000: not given
  std::uint64_t sync_rx_data_id = 0x10000;
  std::uint64_t sync_service = 0x5EC0;
  std::uint64_t sync_event = 0x8FFF;
  std::uint64_t sync_port = 30510;
  std::string sd_key_group;
  bool quiet = false;
};

int run(const Options& o) {
  const std::string me = "layersec config import-arxml: ";
  arxml::ImportOptions opt;
  if (!o.unicast.empty()) opt.unicast = o.unicast;
  opt.name = o.name;
  if (o.sync_tx_data_id <= 0xFFFF) opt.sync_tx_data_id = static_cast<std::uint16_t>(o.sync_tx_data_id);
  if (o.sync_rx_data_id <= 0xFFFF) opt.sync_rx_data_id = static_cast<std::uint16_t>(o.sync_rx_data_id);
  opt.sync_service = static_cast<std::uint16_t>(o.sync_service);
  opt.sync_event = static_cast<std::uint16_t>(o.sync_event);
  opt.sync_port = static_cast<std::uint16_t>(o.sync_port);
  opt.sd_key_group = o.sd_key_group;
  arxml::ImportResult r;
  try {
    const std::string text = read_regular_file(o.file, arxml::kMaxDocumentBytes);
    r = arxml::import_arxml(text, opt);
  } catch (const FileError& e) {
    std::cerr << me << e.what() << "\n";
    return 2;
  } catch (const arxml::ArxmlError& e) {
    std::cerr << me << o.file << ": " << e.what() << "\n";
    return 2;
  }
  if (::mkdir(o.out.c_str(), 0755) != 0 && errno != EEXIST) {
    std::cerr << me << "--out " << o.out << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  try {
    OutputFile node(o.out + "/node.json");
    node.write(r.node.dump(2) + "\n");
    node.close();
    if (!r.secoc.is_null()) {
      OutputFile engine(o.out + "/secoc.json");
      engine.write(r.secoc.dump(2) + "\n");
      engine.close();
    }
  } catch (const FileError& e) {
    std::cerr << me << e.what() << "\n";
    return 1;
  }
  if (!o.quiet)
    for (const auto& n : r.notes) std::cout << "  " << n.path << ": " << n.text << "\n";
  std::cout << "wrote " << o.out << "/node.json" << (r.secoc.is_null() ? "" : " and " + o.out + "/secoc.json")
            << "\n";
  if (!r.key_files.empty()) {
    std::cout << "provision the keys (mode 0600, the same bytes on every node of the key group):\n";
    for (const auto& k : r.key_files) std::cout << "  " << o.out << "/" << k << "\n";
    std::cout << "then: layersec node --config " << o.out << "/node.json --first-start (first run only)\n";
  }
  return 0;
}

const CommandRegistration reg(85, [](CLI::App& root) {
  auto* group = root.add_subcommand("config", "Configuration tools (ARXML import)");
  group->require_subcommand(1);
  auto opts = std::make_shared<Options>();
  auto* cmd = group->add_subcommand("import-arxml",
                                    "AUTOSAR SecOC ECUC + SOME/IP deployment -> node.json and secoc.json");
  cmd->add_option("file", opts->file, "the ARXML file")->required()->check(kRegularFile);
  cmd->add_option("--out", opts->out, "output folder (node.json, secoc.json)")->required()->check(kOutputDir);
  cmd->add_option("--unicast", opts->unicast, "the node's IPv4 address (default: the machine mapping's)");
  cmd->add_option("--name", opts->name, "node name (default: the machine's SHORT-NAME)");
  cmd->add_option("--sync-tx-data-id", opts->sync_tx_data_id,
                  "DataId of the sync messages this node sends (counter freshness)")
      ->check(whole_in(0, 0xFFFF));
  cmd->add_option("--sync-rx-data-id", opts->sync_rx_data_id,
                  "DataId of the peer's sync messages (counter freshness)")
      ->check(whole_in(0, 0xFFFF));
  cmd->add_option("--sync-service", opts->sync_service, "service carrying sync messages (default 0x5ec0)")
      ->check(whole_in(1, 0xFFFE));
  cmd->add_option("--sync-event", opts->sync_event, "its event (default 0x8fff)")->check(whole_in(0x8000, 0xFFFE));
  cmd->add_option("--sync-port", opts->sync_port, "its UDP port (default 30510)")->check(whole_in(1, 65535));
  cmd->add_option("--sd-key-group", opts->sd_key_group, "key group protecting SOME/IP-SD (with several groups)");
  cmd->add_flag("--quiet", opts->quiet, "do not list the mapping notes");
  cmd->callback([opts] { set_exit_code(run(*opts)); });
});

}  // namespace
}  // namespace layersec::app
