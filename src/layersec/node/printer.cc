#include "layersec/node/printer.h"

#include <algorithm>
#include <cstdio>

#include "layersec/base/hex.h"

namespace layersec::node {

std::string hex16(std::uint32_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%04x", static_cast<unsigned>(v & 0xFFFF));
  return b;
}

std::string payload_hex(ByteSpan p) {
  return to_hex(p.first(std::min(p.size(), kMaxPrintedPayload))) + (p.size() > kMaxPrintedPayload ? "..." : "");
}

Printer::Printer(std::ostream& out, bool json_lines, const Clock& clock)
    : out_(out), json_(json_lines), clock_(clock), start_(clock.now()) {}

void Printer::emit(nlohmann::json j, const std::string& human) {
  const double t_ms = (clock_.now() - start_).ms();
  if (json_) {
    j["t_ms"] = static_cast<double>(static_cast<std::int64_t>(t_ms * 1000)) / 1000.0;
    out_ << j.dump() << '\n';
  } else {
    char t[32];
    std::snprintf(t, sizeof t, "[%10.3f ms] ", t_ms);
    out_ << t << human << '\n';
  }
  out_.flush();
}

}  // namespace layersec::node
