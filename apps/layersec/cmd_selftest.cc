// `layersec selftest [--vectors DIR] [--testdata DIR] [--json FILE]`: a
// known-answer self test of every cryptographic primitive the product uses
// against its published vectors (../shared/vectors plus the repository's
// testdata/), with a short throughput measurement per primitive, and where
// each primitive's vectors come from. Exits non-zero if any vector fails or a
// vector file is missing. The primitives, their vectors and the runner live
// in src/layersec/selftest/ (docs/selftest.md); this file parses options and
// prints.
//
// Only algorithm and vector names are printed, never keys or tags.
//
// Hidden: `layersec selftest --chaskey-xcheck FILE` runs the cases written by
// an independent implementation (tests/crypto_xcheck/chaskey_ref.py) through
// selftest/chaskey_xcheck.h.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/file.h"
#include "layersec/base/time.h"
#include "layersec/selftest/chaskey_xcheck.h"
#include "layersec/selftest/selftest.h"

namespace layersec::app {
namespace {

using selftest::Report;

std::string fixed(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

void print_table(const std::vector<Report>& reports, std::ostream& os) {
  char line[256];
  std::snprintf(line, sizeof line, "%-17s %-9s %-6s %10s %12s  %s\n", "algorithm", "vectors", "result", "MB/s",
                "ns/op", "timed operation");
  os << line;
  for (const auto& r : reports) {
    const std::string counts = std::to_string(r.passed) + "/" + std::to_string(r.total);
    std::snprintf(line, sizeof line, "%-17s %-9s %-6s %10s %12s  %s\n", r.name.c_str(), counts.c_str(),
                  r.ok() ? "ok" : "FAIL", r.mb_per_s > 0 ? fixed(r.mb_per_s, 1).c_str() : "-",
                  r.ns_per_op > 0 ? fixed(r.ns_per_op, 0).c_str() : "-", r.bench_what.c_str());
    os << line;
    for (const auto& f : r.failures) os << "    failed: " << f << "\n";
    for (const auto& e : r.errors) os << "    error: " << e << "\n";
  }
}

// The second table: where each row's vectors come from.
void print_sources(const std::vector<Report>& reports, std::ostream& os) {
  os << "vector sources (testdata/*/SOURCE.md and ../shared/vectors/README.md give the details):\n";
  char line[512];
  for (const auto& r : reports) {
    std::snprintf(line, sizeof line, "  %-17s %s\n", r.name.c_str(), r.source.c_str());
    os << line;
  }
}

nlohmann::json json_rows(const std::vector<Report>& reports) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : reports)
    rows.push_back({{"algorithm", r.name},
                    {"passed", r.passed},
                    {"total", r.total},
                    {"ok", r.ok()},
                    {"failures", r.failures},
                    {"errors", r.errors},
                    {"ns_per_op", r.ns_per_op},
                    {"mb_per_s", r.mb_per_s},
                    {"bytes", r.bench_bytes},
                    {"timed_operation", r.bench_what},
                    {"source", r.source}});
  return rows;
}

struct Options {
  std::string vectors;
  std::string testdata;
  std::string json_path;
  std::string chaskey_xcheck;
};

int run_chaskey_xcheck(const std::string& path) {
  std::string text;
  try {
    text = read_regular_file(path, 64 << 20);
  } catch (const FileError& e) {
    std::cerr << "layersec selftest: --chaskey-xcheck: " << e.what() << "\n";
    return 2;
  }
  const auto r = selftest::chaskey_xcheck(text, std::cerr);
  std::cout << "chaskey xcheck: " << r.checked << " cases, " << r.mismatches << " mismatches\n";
  return r.ok() ? 0 : 1;
}

int run(const Options& o) {
  if (!o.chaskey_xcheck.empty()) return run_chaskey_xcheck(o.chaskey_xcheck);
  selftest::VectorDirs dirs = selftest::vector_dirs_from_environment(default_vectors_dir(), default_source_dir());
  if (!o.vectors.empty()) dirs.shared = o.vectors;
  if (!o.testdata.empty()) dirs.testdata = o.testdata;
  const MonotonicClock clock;
  const auto reports = selftest::run_selftest(dirs, clock);
  std::cout << "layersec selftest: known-answer tests (vectors " << dirs.shared.string() << ", testdata "
            << dirs.testdata.string() << "); throughput over ~20 ms per primitive\n";
  print_table(reports, std::cout);
  print_sources(reports, std::cout);
  bool all_ok = true;
  for (const auto& r : reports) all_ok = all_ok && r.ok();
  if (!o.json_path.empty()) {
    try {
      OutputFile out(o.json_path);  // no symlink followed; every write error reported
      out.write(json_rows(reports).dump(2) + "\n");
      out.close();
    } catch (const FileError& e) {
      std::cerr << "layersec selftest: --json: " << e.what() << "\n";
      return 2;
    }
  }
  std::cout << (all_ok ? "selftest: all vectors passed\n" : "selftest: FAILED\n");
  return all_ok ? 0 : 1;
}

const CommandRegistration reg(90, [](CLI::App& root) {
  auto opts = std::make_shared<Options>();
  auto* cmd = root.add_subcommand("selftest", "Known-answer self test of every crypto primitive, with throughput");
  cmd->add_option("--vectors", opts->vectors, "folder of the shared vectors (default: ../shared/vectors)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--testdata", opts->testdata,
                  "the repository's testdata folder (default: $LAYERSEC_SOURCE_DIR/testdata, else the installed or built-from copy)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--json", opts->json_path, "also write the results as JSON to FILE")->check(kOutputFile);
  cmd->add_option("--chaskey-xcheck", opts->chaskey_xcheck, "")->group("")->check(kRegularFile);
  cmd->callback([opts] { set_exit_code(run(*opts)); });
});

}  // namespace
}  // namespace layersec::app
