#include "layersec/harness/plots.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "layersec/base/file.h"

extern char** environ;

namespace layersec::harness {

std::optional<std::string> find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate)) return candidate;
  }
  return std::nullopt;
}

int run_program(const std::vector<std::string>& argv, const std::string& output_file) {
  if (argv.empty()) return -1;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The output file is opened here, through base/file.h (no symlink
  // followed, regular files only), and handed to the child as stdout/stderr.
  int out_fd = -1;
  if (!output_file.empty()) {
    try {
      out_fd = open_output_file(output_file);
    } catch (const FileError&) {
      return -1;
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (out_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 2);
  }
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (out_fd >= 0) ::close(out_fd);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool is_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char sig[8] = {};
  in.read(reinterpret_cast<char*>(sig), 8);
  static const unsigned char kPng[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  return in.gcount() == 8 && std::equal(sig, sig + 8, kPng);
}

namespace {

// gnuplot string literal (single quotes; a quote is doubled).
std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

std::string safe_name(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out;
}

// Writes `text` to `path` through OutputFile; throws FileError.
void write_file(const std::string& path, const std::string& text) {
  OutputFile f(path);
  f.write(text);
  f.close();
}

constexpr const char* kCairoTerminal = "set terminal pngcairo size 900,600 noenhanced font ',10'";

// gnuplot on PATH and `dir`/plot-data created; otherwise nullopt with
// outcome.message saying why (`what`: what is skipped).
std::optional<std::string> prepare_plot_dir(const std::string& dir, const std::string& what, PlotOutcome& outcome) {
  const auto gnuplot = find_program("gnuplot");
  if (!gnuplot) {
    outcome.message = "gnuplot not found on PATH: " + what + " skipped (install gnuplot-nox, scripts/install-deps.sh)";
    return std::nullopt;
  }
  outcome.gnuplot_found = true;
  const std::filesystem::path data = std::filesystem::path(dir) / "plot-data";
  std::error_code ec;
  std::filesystem::create_directories(data, ec);
  if (ec) {
    outcome.message = "cannot create " + data.string() + ": " + ec.message();
    return std::nullopt;
  }
  return gnuplot;
}

// Writes the gnuplot script and runs it, output to `log`; a script that
// fails is run again with the plain png terminal (gnuplot built without
// cairo). The exit status, or nullopt with outcome.message set when the
// script cannot be written.
std::optional<int> run_gnuplot(const std::string& gnuplot, const std::string& script, std::string text,
                               const std::string& log, PlotOutcome& outcome) {
  try {
    write_file(script, text);
  } catch (const FileError& e) {
    outcome.message = std::string("cannot write ") + e.what();
    return std::nullopt;
  }
  int rc = run_program({gnuplot, script}, log);
  if (rc != 0) {
    const std::string from = kCairoTerminal;
    if (auto pos = text.find(from); pos != std::string::npos) text.replace(pos, from.size(), "set terminal png size 900,600");
    try {
      write_file(script, text);
    } catch (const FileError& e) {
      outcome.message = std::string("cannot write ") + e.what();
      return std::nullopt;
    }
    rc = run_program({gnuplot, script}, log);
  }
  return rc;
}

}  // namespace

PlotOutcome write_plots(const std::string& dir, const std::vector<ScenarioResult>& rows) {
  PlotOutcome outcome;
  const auto gnuplot = prepare_plot_dir(dir, "plots", outcome);
  if (!gnuplot) return outcome;
  namespace fs = std::filesystem;
  const fs::path base(dir);
  const fs::path data = base / "plot-data";
  std::ostringstream gp;
  gp << kCairoTerminal << "\n"
     << "set grid\nset key bottom right\n";
  // If pngcairo is missing, the plain png terminal is the fallback.
  std::ostringstream gp_png;
  std::vector<std::string> pngs;
  std::vector<std::pair<std::string, std::string>> files;  // plot data: path, contents (written before gnuplot runs)
  std::vector<std::pair<std::string, std::string>> cdf_files;  // label, data file (cdf_all)
  bool have_paper_rows = false;
  for (const auto& r : rows) have_paper_rows = have_paper_rows || r.series == "paper-scenarios";
  for (const auto& r : rows) {
    if (r.samples_us.empty()) continue;
    std::vector<double> sorted = r.samples_us;
    std::sort(sorted.begin(), sorted.end());
    const std::string name = safe_name(r.name);
    const fs::path f = data / ("cdf_" + name + ".dat");
    std::ostringstream out;
    out << "# half-RTT latency (us)  cumulative fraction\n";
    for (const auto& [v, p] : cdf_points(sorted)) out << v << ' ' << p << "\n";
    files.emplace_back(f.string(), out.str());
    const std::string label = r.paper_id.empty() ? r.name : r.paper_id + " " + r.name;
    // cdf_all shows the paper's scenarios when there are any (else every row).
    if (!have_paper_rows || r.series == "paper-scenarios") cdf_files.emplace_back(label, f.string());
    const std::string png = (base / ("cdf_" + name + ".png")).string();
    gp << "set output " << gp_quote(png) << "\n"
       << "set title " << gp_quote("Latency CDF: " + label + " (half RTT, N=" + std::to_string(r.subscribers) +
                                   ", " + std::to_string(r.latency.count) + " samples, measured)")
       << "\nset xlabel " << gp_quote("latency (us, " + timing_model_text(r.timing_model) + ")") << "\nset ylabel 'fraction of iterations'\nset yrange [0:1]\n"
       << "plot " << gp_quote(f.string()) << " using 1:2 with steps lw 2 title " << gp_quote(label) << "\n";
    pngs.push_back(png);
  }
  if (!cdf_files.empty()) {
    const std::string png = (base / "cdf_all.png").string();
    gp << "set output " << gp_quote(png)
       << (have_paper_rows ? "\nset title 'Latency CDF, the paper scenarios (half RTT, measured)'\n"
                           : "\nset title 'Latency CDF, all scenarios (half RTT, measured)'\n")
       << "set logscale x\nplot ";
    for (std::size_t i = 0; i < cdf_files.size(); ++i) {
      gp << (i ? ", " : "") << gp_quote(cdf_files[i].second) << " using 1:2 with steps lw 2 title "
         << gp_quote(cdf_files[i].first);
    }
    gp << "\nunset logscale x\n";
    pngs.push_back(png);
  }
  // Latency against group size, one line per security configuration.
  std::map<std::string, std::vector<const ScenarioResult*>> groups;
  for (const auto& r : rows) {
    if (r.series != "group-size") continue;
    // One line per topology (sim, netns-kernel, netns-raw) and security configuration.
    groups[(r.topology == "sim" ? std::string() : r.topology + " ") + r.security + "/" + r.key_distribution]
        .push_back(&r);
  }
  if (!groups.empty()) {
    std::vector<std::pair<std::string, std::string>> series;
    bool any_serial = false;
    for (auto& [key, list] : groups) {
      std::sort(list.begin(), list.end(),
                [](const ScenarioResult* a, const ScenarioResult* b) { return a->subscribers < b->subscribers; });
      const fs::path f = data / ("group_" + safe_name(key) + ".dat");
      std::ostringstream out;
      // Latency to the last receiver: the one-way figure (notify -> the latest
      // subscriber's event handler), as the group-size goal judges it.
      out << "# subscribers  one_way_mean_us  one_way_p99_us  serial_one_way_mean_us  serial_one_way_p99_us "
             "(timing model of the first two: "
          << (list.front()->timing_model.empty() ? std::string("unstated") : list.front()->timing_model) << ")\n";
      for (const auto* r : list) {
        out << r->subscribers << ' ' << r->one_way.mean << ' ' << r->one_way.p99 << ' '
            << (r->serial_one_way ? std::to_string(r->serial_one_way->mean) : std::string("NaN")) << ' '
            << (r->serial_one_way ? std::to_string(r->serial_one_way->p99) : std::string("NaN")) << "\n";
      }
      if (list.front()->serial_one_way) any_serial = true;
      files.emplace_back(f.string(), out.str());
      series.emplace_back(key, f.string());
    }
    const std::string png = (base / "group_size.png").string();
    gp << "set output " << gp_quote(png)
       << "\nset title 'Latency to the last receiver against multicast group size (one way; "
       << (any_serial ? "parallel-ECU model, serial one-thread dotted" : "one process per node") << ")'\n"
       << "set xlabel 'subscribers N'\nset ylabel 'latency to the last receiver (us, log scale)'\nset autoscale y\n"
       << "set logscale x 2\nset logscale y\nset key top left\nplot ";
    for (std::size_t i = 0; i < series.size(); ++i) {
      gp << (i ? ", " : "") << gp_quote(series[i].second) << " using 1:2 with linespoints lw 2 title "
         << gp_quote(series[i].first + " mean") << ", " << gp_quote(series[i].second)
         << " using 1:3 with linespoints dt 2 title " << gp_quote(series[i].first + " p99");
      if (any_serial) {
        gp << ", " << gp_quote(series[i].second) << " using 1:4 with linespoints dt 3 title "
           << gp_quote(series[i].first + " mean, serial one-thread");
      }
    }
    gp << "\nunset logscale x\nunset logscale y\n";
    pngs.push_back(png);
  }
  if (pngs.empty()) {
    outcome.message = "no samples to plot";
    return outcome;
  }
  const fs::path script = base / "plots.gp";
  try {
    for (const auto& [path, text] : files) write_file(path, text);
  } catch (const FileError& e) {
    outcome.message = std::string("cannot write ") + e.what();
    return outcome;
  }
  const fs::path log = base / "plot-data" / "gnuplot.log";
  const auto ran = run_gnuplot(*gnuplot, script.string(), gp.str(), log.string(), outcome);
  if (!ran) return outcome;
  const int rc = *ran;
  for (const auto& p : pngs) {
    if (is_png(p)) outcome.files.push_back(p);
  }
  if (rc != 0) outcome.message = "gnuplot failed (exit " + std::to_string(rc) + "), see " + log.string();
  return outcome;
}

// ---- The zonal network (zonal.h): latency against hops --------------------

PlotOutcome write_zonal_plot(const std::string& dir, const ZonalReport& report) {
  PlotOutcome outcome;
  const auto gnuplot = prepare_plot_dir(dir, "zonal plot", outcome);
  if (!gnuplot) return outcome;
  namespace fs = std::filesystem;
  const fs::path base(dir);
  const fs::path data = base / "plot-data";
  // One line per hop count: max and p99 of on, strict, fifo (ideal clocks),
  // then the bounds, then the max of the first gptp and free-running rows.
  std::map<int, std::map<ZonalShaper, const ZonalRow*>> by_hops;
  std::map<int, std::map<ZonalClock, const ZonalRow*>> clocked;
  for (const auto& r : report.rows) {
    if (r.clock == ZonalClock::kIdeal) {
      by_hops[r.hops][r.shaper] = &r;
    } else if (!clocked[r.hops].count(r.clock)) {
      clocked[r.hops][r.clock] = &r;
    }
  }
  std::ostringstream dat;
  dat << "# hops  on_max_us on_p99_us  strict_max_us strict_p99_us  fifo_max_us fifo_p99_us  bound_on_us "
         "bound_strict_us  gptp_max_us free_max_us  (simulated time, farthest ECU)\n";
  auto cell = [](const ZonalRow* r, int what) -> std::string {
    if (!r) return "NaN";
    if (what == 0) return std::to_string(static_cast<double>(r->st_max_ns) / 1000.0);
    if (what == 1) return std::to_string(static_cast<double>(r->st_p99_ns) / 1000.0);
    return r->bound_ns ? std::to_string(static_cast<double>(*r->bound_ns) / 1000.0) : std::string("NaN");
  };
  for (const auto& entry : by_hops) {
    const auto& m = entry.second;
    auto get = [&m](ZonalShaper s) -> const ZonalRow* {
      auto it = m.find(s);
      return it == m.end() ? nullptr : it->second;
    };
    dat << entry.first;
    for (ZonalShaper s : {ZonalShaper::kOn, ZonalShaper::kStrict, ZonalShaper::kFifo})
      dat << ' ' << cell(get(s), 0) << ' ' << cell(get(s), 1);
    dat << ' ' << cell(get(ZonalShaper::kOn), 2) << ' ' << cell(get(ZonalShaper::kStrict), 2);
    const auto& c = clocked[entry.first];
    for (ZonalClock k : {ZonalClock::kGptp, ZonalClock::kFree}) dat << ' ' << cell(c.count(k) ? c.at(k) : nullptr, 0);
    dat << "\n";
  }
  bool have_gptp = false, have_free = false;
  for (const auto& entry : clocked) {
    have_gptp = have_gptp || entry.second.count(ZonalClock::kGptp);
    have_free = have_free || entry.second.count(ZonalClock::kFree);
  }
  if (by_hops.empty()) {
    outcome.message = "no zonal rows to plot";
    return outcome;
  }
  const fs::path f = data / "zonal.dat";
  const std::string png = (base / "zonal.png").string();
  const auto& o = report.options;
  std::ostringstream gp;
  gp << kCairoTerminal << "\n"
     << "set output " << gp_quote(png) << "\n"
     << "set title " << gp_quote("Zonal network (sim): farthest ECU's ST latency, " + std::to_string(o.port_bps / 1'000'000) +
                                 " Mbit/s backbone, " + std::to_string(static_cast<int>(o.be_load_pct)) + " % camera load")
     << "\nset grid\nset key top left\nset xlabel 'zonal switches between ECU and central node'\n"
     << "set ylabel 'ST latency (us, simulated time, log scale)'\nset logscale y\nset xtics 1\n"
     << "set xrange [" << by_hops.begin()->first - 0.2 << ":" << by_hops.rbegin()->first + 0.2 << "]\nplot "
     << gp_quote(f.string()) << " using 1:2 with linespoints lw 2 title 'shaper on, max', "
     << gp_quote(f.string()) << " using 1:4 with linespoints lw 2 title 'strict priority, max', "
     << gp_quote(f.string()) << " using 1:5 with linespoints dt 2 title 'strict priority, p99', "
     << gp_quote(f.string()) << " using 1:6 with linespoints lw 2 title 'FIFO, max', "
     << gp_quote(f.string()) << " using 1:7 with linespoints dt 2 title 'FIFO, p99', "
     << gp_quote(f.string()) << " using 1:8 with lines lw 1 dt 3 title 'analytic bound, shaper on', "
     << gp_quote(f.string()) << " using 1:9 with lines lw 1 dt 4 title 'analytic bound, strict'";
  if (have_gptp)
    gp << ", " << gp_quote(f.string())
       << " using 1:10 with linespoints lw 2 dt 2 lc rgb 'black' title 'shaper on, gPTP clocks, max'";
  if (have_free)
    gp << ", " << gp_quote(f.string())
       << " using 1:11 with linespoints lw 2 lc rgb '#b22222' title 'shaper on, free-running clocks, max'";
  gp << "\n";
  const fs::path script = base / "zonal.gp";
  try {
    write_file(f.string(), dat.str());
  } catch (const FileError& e) {
    outcome.message = std::string("cannot write ") + e.what();
    return outcome;
  }
  const fs::path log = data / "gnuplot_zonal.log";
  const auto ran = run_gnuplot(*gnuplot, script.string(), gp.str(), log.string(), outcome);
  if (!ran) return outcome;
  const int rc = *ran;
  if (is_png(png)) outcome.files.push_back(png);
  if (rc != 0) outcome.message = "gnuplot failed (exit " + std::to_string(rc) + "), see " + log.string();
  return outcome;
}

}  // namespace layersec::harness
