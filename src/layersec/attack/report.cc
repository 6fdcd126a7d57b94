#include "layersec/attack/report.h"

#include <cstdio>
#include <sstream>

namespace layersec::attack {

std::uint64_t total_rejected(const AttackRow& row) {
  std::uint64_t n = 0;
  for (const auto& [reason, count] : row.rejected) n += count;
  return n;
}

bool row_violates(const AttackRow& row) {
  if (row.accepted > 0 && !row.acceptance_expected) return true;
  if (row.legit_lost > 0 && !row.loss_allowed) return true;
  return false;
}

bool row_failed(const AttackRow& row, bool strict) {
  return row_violates(row) && (strict || row.weakness.empty());
}

bool any_failed(const std::vector<AttackRow>& rows, bool strict) {
  for (const auto& r : rows)
    if (row_failed(r, strict)) return true;
  return false;
}

namespace {

bool shows_weakness(const AttackRow& r) { return !r.weakness.empty() && row_violates(r); }

std::size_t weaknesses_shown(const std::vector<AttackRow>& rows) {
  std::size_t n = 0;
  for (const auto& r : rows) n += shows_weakness(r) ? 1 : 0;
  return n;
}

}  // namespace

nlohmann::json rows_json(const std::vector<AttackRow>& rows, const AttackOptions& options) {
  nlohmann::json out;
  out["run"] = {{"attempts_per_class", options.attempts},
                {"seed", options.seed},
                {"strict", options.strict},
                {"failed", any_failed(rows, options.strict)},
                {"weaknesses", weaknesses_shown(rows)}};
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
                        {"violates", row_violates(r)},
                        {"failed", row_failed(r, options.strict)},
                        {"note", r.note}};
    j["weakness"] = r.weakness.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.weakness);
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

void write_table(std::ostream& out, const std::vector<AttackRow>& rows, bool strict) {
  char line[512];
  std::snprintf(line, sizeof line, "%-8s %-32s %-32s %9s %8s %9s %9s %7s %9s  %s\n", "layer", "configuration",
                "class", "attempts", "accepted", "rejected", "legit_ok", "lost", "recov_ms", "rejected by reason");
  out << line;
  std::size_t failed = 0;
  for (const auto& r : rows) {
    const std::string recovery = r.recovery_ms ? std::to_string(*r.recovery_ms).substr(0, 8) : "-";
    std::string accepted = std::to_string(r.accepted);
    if (r.accepted > 0 && r.acceptance_expected) accepted += "*";
    const char* mark = row_failed(r, strict) ? "  FAILED" : (shows_weakness(r) ? "  WEAK" : "");
    std::snprintf(line, sizeof line, "%-8s %-32s %-32s %9llu %8s %9llu %9llu %7llu %9s  %s%s\n", r.layer.c_str(),
                  r.configuration.c_str(), r.attack_class.c_str(), static_cast<unsigned long long>(r.attempts),
                  accepted.c_str(), static_cast<unsigned long long>(total_rejected(r)),
                  static_cast<unsigned long long>(r.legit_delivered), static_cast<unsigned long long>(r.legit_lost),
                  recovery.c_str(), reasons_text(r).c_str(), mark);
    out << line;
    if (row_failed(r, strict)) ++failed;
  }
  for (const auto& r : rows) {
    if (!row_violates(r)) continue;
    out << (row_failed(r, strict) ? "FAILED " : "WEAK ") << r.layer << " " << r.configuration << " "
        << r.attack_class << ": ";
    if (r.accepted > 0 && !r.acceptance_expected) out << r.accepted << " attacker frames accepted";
    if (r.legit_lost > 0 && !r.loss_allowed)
      out << (r.accepted > 0 && !r.acceptance_expected ? "; " : "") << r.legit_lost << " legitimate messages lost";
    if (!r.weakness.empty()) out << " (known weakness: " << r.weakness << ")";
    out << "\n";
  }
  for (const auto& r : rows) {
    if (!r.weakness.empty() && !row_violates(r)) {
      out << "NOT SHOWN " << r.layer << " " << r.configuration << " " << r.attack_class
          << ": the known weakness did not reproduce (" << r.weakness << ")\n";
    }
  }
  out << "* accepted where the configuration gives no protection against the class (reported, not a failure)\n";
  out << rows.size() << " rows, " << failed << " failed, " << weaknesses_shown(rows)
      << " show a known weakness (docs/attack.md)" << (strict ? ", strict: weaknesses fail" : "") << "\n";
}

}  // namespace layersec::attack
