// The subcommand registry of command.h / command_registry.h, shared by `layersec` (main.cc) and
// `layersec-node` (apps/layersec_node/main.cc).
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "command.h"
#include "command_registry.h"

namespace layersec::app {
namespace {
int g_exit_code = 0;
}  // namespace

std::vector<std::pair<int, Registrar>>& command_registry() {
  static std::vector<std::pair<int, Registrar>> r;
  return r;
}

CommandRegistration::CommandRegistration(int order, Registrar registrar) {
  command_registry().emplace_back(order, std::move(registrar));
}

CLI::App& bench_group(CLI::App& root) { return *root.get_subcommand("bench"); }

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

int run_commands(CLI::App& app, int argc, const char* const* argv) {
  auto& regs = command_registry();
  std::stable_sort(regs.begin(), regs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
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
