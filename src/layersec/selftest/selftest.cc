// The self test runner (selftest.h).
#include "layersec/selftest/selftest.h"

#include <cstdint>

namespace layersec::selftest {

namespace {

// Times `op` in batches of 16 until `budget` has passed; ns per call.
double time_operation(const std::function<bool()>& op, const Clock& clock, Duration budget, bool* all_ok) {
  for (int i = 0; i < 8; ++i) *all_ok &= op();
  std::uint64_t calls = 0;
  const TimePoint start = clock.now();
  TimePoint now = start;
  do {
    for (int i = 0; i < 16; ++i) *all_ok &= op();
    calls += 16;
    now = clock.now();
  } while (now - start < budget);
  return static_cast<double>((now - start).ns()) / static_cast<double>(calls);
}

}  // namespace

Report run_primitive(const Primitive& p, const VectorDirs& dirs, const Clock& clock, Duration budget) {
  Report r;
  r.name = p.name;
  r.source = p.source;
  Tally t;
  try {
    p.check(dirs, t);
  } catch (const std::exception& e) {  // VectorFileError, or a backend refusing a key
    t.error(e.what());
  }
  r.passed = t.passed();
  r.total = t.total();
  r.failures = t.failures();
  r.errors = t.errors();
  r.bench_what = p.timed.what;
  r.bench_bytes = p.timed.bytes;
  const std::function<bool()> op = p.timed.prepare ? p.timed.prepare() : std::function<bool()>();
  if (!op) {
    r.errors.push_back("cannot build a context for the throughput run");
    return r;
  }
  bool all_ok = true;
  r.ns_per_op = time_operation(op, clock, budget, &all_ok);
  if (!all_ok) r.errors.push_back("the timed operation failed");
  if (r.bench_bytes >= 64) r.mb_per_s = static_cast<double>(r.bench_bytes) * 1e3 / r.ns_per_op;  // bytes/ns*1e3 = MB/s
  return r;
}

std::vector<Report> run_selftest(const VectorDirs& dirs, const Clock& clock, Duration budget) {
  std::vector<Report> out;
  for (const auto& p : all_primitives()) out.push_back(run_primitive(p, dirs, clock, budget));
  return out;
}

int total_vectors(const std::vector<Report>& reports) {
  int n = 0;
  for (const auto& r : reports) n += r.total;
  return n;
}

}  // namespace layersec::selftest
