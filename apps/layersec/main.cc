// layersec: secured SOME/IP, SecOC, MACsec and Sampled Values nodes, benchmarks
// and self tests. See README.md for the commands.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <system_error>
#include <vector>

#include "command.h"

namespace layersec::app {
namespace {
std::vector<std::pair<int, Registrar>>& registry() {
  static std::vector<std::pair<int, Registrar>> r;
  return r;
}
int g_exit_code = 0;
}  // namespace

CommandRegistration::CommandRegistration(int order, Registrar registrar) {
  registry().emplace_back(order, std::move(registrar));
}

CLI::App& bench_group(CLI::App& root) { return *root.get_subcommand("bench"); }

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

namespace {
// PREFIX/share/layersec when this binary runs from an installed PREFIX/bin
// (make package, cmake --install), else empty.
std::filesystem::path installed_data_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  auto dir = exe.parent_path().parent_path() / "share" / "layersec";
  if (!std::filesystem::is_directory(dir / "testdata", ec)) return {};
  return dir;
}
}  // namespace

std::string default_vectors_dir() {
  if (const char* e = std::getenv("LAYERSEC_VECTORS_DIR"); e && *e) return e;
  if (const auto d = installed_data_dir(); !d.empty()) return (d / "vectors").string();
  return LAYERSEC_DEFAULT_VECTORS_DIR;
}

std::string default_source_dir() {
  if (const auto d = installed_data_dir(); !d.empty()) return d.string();
#ifdef LAYERSEC_SOURCE_DIR
  return LAYERSEC_SOURCE_DIR;
#else
  return ".";
#endif
}

}  // namespace layersec::app

int main(int argc, char** argv) {
  using namespace layersec::app;
  CLI::App app{"layersec: SOME/IP + SecOC, MACsec and IEC 61850 Sampled Values security stack"};
  app.require_subcommand(1);
  auto* bench = app.add_subcommand("bench", "Run benchmarks (secured figure beside its baseline)");
  bench->require_subcommand(1);
  auto& regs = registry();
  std::stable_sort(regs.begin(), regs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [order, reg] : regs) reg(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "layersec: " << e.what() << "\n";
    return 1;
  }
  return exit_code();
}
