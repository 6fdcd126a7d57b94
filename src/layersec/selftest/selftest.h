// `layersec selftest` as a library: runs every primitive of
// known_answers.h over its published vectors, then times one operation of
// it, and returns one report per primitive. The CLI (apps/layersec/
// cmd_selftest.cc) parses options and prints; the unit tests call the same
// runner.
//
// Time comes from the Clock passed in (the CLI passes the monotonic clock).
// Only algorithm and vector names are reported, never keys or tags.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/selftest/known_answers.h"
#include "layersec/selftest/vector_file.h"

namespace layersec::selftest {

// One line of the self test.
struct Report {
  std::string name;
  std::string source;  // where the vectors come from
  int passed = 0;
  int total = 0;
  std::vector<std::string> failures;  // vector names only
  std::vector<std::string> errors;    // missing or malformed files, failed timed runs
  double ns_per_op = 0;
  double mb_per_s = 0;  // 0 for operations under 64 bytes (timed per operation only)
  std::size_t bench_bytes = 0;
  std::string bench_what;

  // True if the primitive had vectors, all passed and nothing failed.
  [[nodiscard]] bool ok() const { return errors.empty() && total > 0 && passed == total; }
};

// Runs one primitive: its checks (a VectorFileError becomes an error line of
// this report only), then its timed operation over about `budget` on `clock`
// after 8 warm-up calls.
Report run_primitive(const Primitive& p, const VectorDirs& dirs, const Clock& clock, Duration budget);

// Runs every primitive of all_primitives(), in order.
std::vector<Report> run_selftest(const VectorDirs& dirs, const Clock& clock,
                                 Duration budget = Duration::milliseconds(20));

// Total vectors of all reports (the count the README quotes).
int total_vectors(const std::vector<Report>& reports);

}  // namespace layersec::selftest
