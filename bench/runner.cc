#include "runner.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <benchmark/benchmark.h>

#include "layersec/base/file.h"

namespace layersec::benchrun {
namespace {

struct Collected {
  std::string name;
  double ns = 0;
};

class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  explicit CollectingReporter(bool quiet) : quiet_(quiet) {}
  bool ReportContext(const Context& ctx) override {
    return quiet_ ? true : benchmark::ConsoleReporter::ReportContext(ctx);
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      Collected c;
      c.name = r.benchmark_name();
      // Time per iteration in nanoseconds. Benchmarks that time themselves
      // (UseManualTime) report that figure; all others report the thread's
      // CPU time, which on a shared machine excludes time spent preempted
      // (both ours and the baseline are measured the same way in one run).
      const bool manual = c.name.find("manual_time") != std::string::npos;
      const double per_unit = r.time_unit == benchmark::kNanosecond    ? 1.0
                              : r.time_unit == benchmark::kMicrosecond ? 1e3
                              : r.time_unit == benchmark::kMillisecond ? 1e6
                                                                       : 1e9;
      c.ns = (manual ? r.GetAdjustedRealTime() : r.GetAdjustedCPUTime()) * per_unit;
      collected.push_back(c);
    }
    if (!quiet_) benchmark::ConsoleReporter::ReportRuns(runs);
  }
  std::vector<Collected> collected;

 private:
  bool quiet_;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, sep)) out.push_back(part);
  return out;
}

}  // namespace

std::vector<PairedFigure> run_paired(const RunOptions& options) {
  std::string filter_arg = "--benchmark_filter=" + options.filter;
  std::ostringstream mt;
  mt << "--benchmark_min_time=" << (options.smoke ? 0.001 : options.min_time_s);
  std::string min_time_arg = mt.str();
  std::string argv0 = "layersec";
  char* argv[] = {argv0.data(), filter_arg.data(), min_time_arg.data(), nullptr};
  int argc = 3;
  benchmark::Initialize(&argc, argv);
  CollectingReporter reporter(options.quiet);
  const std::size_t n = benchmark::RunSpecifiedBenchmarks(&reporter);
  if (n == 0) throw std::runtime_error("no benchmark matches " + options.filter);

  // key (group, case..., bytes) -> (ours, baseline)
  std::map<std::tuple<std::string, std::vector<std::string>, std::size_t>, std::pair<double, double>>
      table;
  std::vector<std::tuple<std::string, std::vector<std::string>, std::size_t>> order;
  for (const auto& c : reporter.collected) {
    auto parts = split(c.name, '/');
    // strip Google Benchmark suffixes such as "min_time:0.001" or "real_time"
    while (!parts.empty() && parts.back().find(':') != std::string::npos) parts.pop_back();
    while (!parts.empty() && (parts.back() == "real_time" || parts.back() == "manual_time"))
      parts.pop_back();
    if (parts.size() < 4) continue;
    const std::size_t bytes = std::stoul(parts.back());
    const std::string role = parts[parts.size() - 2];
    std::vector<std::string> key(parts.begin() + 1, parts.end() - 2);
    auto k = std::make_tuple(parts[0], key, bytes);
    if (!table.count(k)) order.push_back(k);
    auto& slot = table[k];
    if (role == "baseline") {
      slot.second = c.ns;
    } else {
      slot.first = c.ns;
    }
  }
  std::vector<PairedFigure> out;
  for (const auto& k : order) {
    const auto& [ours, base] = table[k];
    if (ours == 0) continue;
    PairedFigure f;
    f.group = std::get<0>(k);
    f.key = std::get<1>(k);
    f.bytes = std::get<2>(k);
    f.ns_per_op = ours;
    f.baseline_ns_per_op = base;
    f.ratio = base > 0 ? ours / base : 0;
    out.push_back(std::move(f));
  }
  return out;
}

void print_table(const std::vector<PairedFigure>& figures, const std::string& ours_label,
                 const std::string& baseline_label) {
  std::printf("%-34s %7s %14s %16s %7s\n", "case", "bytes", ours_label.c_str(),
              baseline_label.c_str(), "ratio");
  for (const auto& f : figures) {
    std::string name;
    for (std::size_t i = 0; i < f.key.size(); ++i) name += (i ? "/" : "") + f.key[i];
    std::printf("%-34s %7zu %14.1f %16.1f %7.3f\n", name.c_str(), f.bytes, f.ns_per_op,
                f.baseline_ns_per_op, f.ratio);
  }
}

void write_json(const std::string& path, const nlohmann::json& rows) {
  const std::string text = rows.dump(2) + "\n";
  if (path == "-") {
    std::cout << text;
    return;
  }
  // base/file.h: no symlink followed, regular files only, every write and
  // the final fsync/close checked (FileError names the path).
  OutputFile out(path);
  out.write(text);
  out.close();
}

}  // namespace layersec::benchrun
