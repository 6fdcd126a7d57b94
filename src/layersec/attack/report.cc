#include "layersec/attack/report.h"

#include <cstdio>
#include <sstream>

namespace layersec::attack {

std::uint64_t total_rejected(const AttackRow& row) {
  std::uint64_t n = 0;
  for (const auto& [reason, count] : row.rejected) n += count;
  return n;
}

bool row_failed(const AttackRow& row) {
  if (row.accepted > 0 && !row.acceptance_expected) return true;
  if (row.legit_lost > 0 && !row.loss_allowed) return true;
  return false;
}

bool any_failed(const std::vector<AttackRow>& rows) {
  for (const auto& r : rows)
    if (row_failed(r)) return true;
  return false;
}

nlohmann::json rows_json(const std::vector<AttackRow>& rows, const AttackOptions& options) {
  nlohmann::json out;
  out["run"] = {{"attempts_per_class", options.attempts}, {"seed", options.seed}, {"failed", any_failed(rows)}};
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json rejected = nlohmann::json::object();
    for (const auto& [reason, count] : r.rejected) rejected[reason] = count;
    nlohmann::json j = {{"layer", r.layer},
                        {"configuration", r.configuration},
                        {"class", r.attack_class},
                        {"attempts", r.attempts},
                        {"accepted", r.accepted},
                        {"rejected", rejected},
                        {"rejected_total", total_rejected(r)},
                        {"legit_delivered", r.legit_delivered},
                        {"legit_lost", r.legit_lost},
                        {"acceptance_expected", r.acceptance_expected},
                        {"loss_allowed", r.loss_allowed},
                        {"failed", row_failed(r)},
                        {"note", r.note}};
    j["recovery_ms"] = r.recovery_ms ? nlohmann::json(*r.recovery_ms) : nlohmann::json(nullptr);
    list.push_back(std::move(j));
  }
  out["rows"] = std::move(list);
  return out;
}

namespace {

std::string reasons_text(const AttackRow& r) {
  std::ostringstream o;
  bool first = true;
  for (const auto& [reason, count] : r.rejected) {
    if (count == 0) continue;
    o << (first ? "" : ",") << reason << "=" << count;
    first = false;
  }
  return first ? "-" : o.str();
}

}  // namespace

void write_table(std::ostream& out, const std::vector<AttackRow>& rows) {
  char line[512];
  std::snprintf(line, sizeof line, "%-7s %-28s %-30s %9s %8s %9s %9s %7s %9s  %s\n", "layer", "configuration",
                "class", "attempts", "accepted", "rejected", "legit_ok", "lost", "recov_ms", "rejected by reason");
  out << line;
  std::size_t failed = 0;
  for (const auto& r : rows) {
    const std::string recovery = r.recovery_ms ? std::to_string(*r.recovery_ms).substr(0, 8) : "-";
    std::string accepted = std::to_string(r.accepted);
    if (r.accepted > 0 && r.acceptance_expected) accepted += "*";
    std::snprintf(line, sizeof line, "%-7s %-28s %-30s %9llu %8s %9llu %9llu %7llu %9s  %s%s\n", r.layer.c_str(),
                  r.configuration.c_str(), r.attack_class.c_str(), static_cast<unsigned long long>(r.attempts),
                  accepted.c_str(), static_cast<unsigned long long>(total_rejected(r)),
                  static_cast<unsigned long long>(r.legit_delivered), static_cast<unsigned long long>(r.legit_lost),
                  recovery.c_str(), reasons_text(r).c_str(), row_failed(r) ? "  FAILED" : "");
    out << line;
    if (row_failed(r)) ++failed;
  }
  for (const auto& r : rows) {
    if (!row_failed(r)) continue;
    out << "FAILED " << r.layer << " " << r.configuration << " " << r.attack_class << ": ";
    if (r.accepted > 0 && !r.acceptance_expected) out << r.accepted << " attacker frames accepted";
    if (r.legit_lost > 0 && !r.loss_allowed)
      out << (r.accepted > 0 && !r.acceptance_expected ? "; " : "") << r.legit_lost << " legitimate messages lost";
    out << "\n";
  }
  out << "* accepted where the configuration gives no protection against the class (reported, not a failure)\n";
  out << rows.size() << " rows, " << failed << " failed\n";
}

}  // namespace layersec::attack
