// One line per observation of a running node (`layersec node`): a JSON object
// with "t_ms" added (--json), or "[   t.ttt ms] " and a readable text. Each
// line is flushed at once so a reader (a test, a pipe) sees it immediately.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "layersec/base/bytes.h"
#include "layersec/base/time.h"

namespace layersec::node {

// Bytes of payload shown per line (longer payloads end in "...").
inline constexpr std::size_t kMaxPrintedPayload = 64;

// "0x1234": the low 16 bits of `v`, four hex digits.
[[nodiscard]] std::string hex16(std::uint32_t v);
// Hex of the first kMaxPrintedPayload bytes of `p`, "..." when cut.
[[nodiscard]] std::string payload_hex(ByteSpan p);

class Printer {
 public:
  // `out` and `clock` are not owned and must outlive the printer; t_ms
  // counts from construction on `clock`.
  Printer(std::ostream& out, bool json_lines, const Clock& clock);
  // Writes `j` (json lines) or `human` as one line.
  void emit(nlohmann::json j, const std::string& human);

 private:
  std::ostream& out_;
  bool json_;
  const Clock& clock_;
  TimePoint start_;
};

}  // namespace layersec::node
