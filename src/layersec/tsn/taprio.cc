#include "layersec/tsn/taprio.h"

#include <charconv>
#include <sstream>

namespace layersec::tsn {

namespace {

std::vector<std::string_view> tokenize(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\') {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\n' && text[j] != '\r' &&
           text[j] != '\\') {
      ++j;
    }
    out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

template <class T>
bool parse_dec(std::string_view s, T& out) {
  if (s.empty()) return false;
  const auto* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out, 10);
  return ec == std::errc() && p == end;
}

bool parse_hex(std::string_view s, std::uint32_t& out) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 8) return false;
  const auto* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out, 16);
  return ec == std::errc() && p == end;
}

// flags: hexadecimal with 0x, else decimal (tc accepts both).
bool parse_flags(std::string_view s, std::uint32_t& out) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return parse_hex(s, out);
  return parse_dec(s, out);
}

class Parser {
 public:
  explicit Parser(std::vector<std::string_view> t) : tok_(std::move(t)) {}

  TaprioParse run(GclLimits limits) {
    // Skip a leading "tc qdisc ... " up to the "taprio" keyword.
    std::size_t start = 0;
    for (std::size_t k = 0; k < tok_.size(); ++k) {
      if (tok_[k] == "taprio") {
        start = k + 1;
        break;
      }
    }
    pos_ = start;
    TaprioSchedule s;
    for (int p = 0; p < 16; ++p) s.map[static_cast<std::size_t>(p)] = 0;
    bool have_num_tc = false;
    bool have_map = false;
    bool have_base = false;
    std::vector<std::string_view> map_tokens;
    std::vector<std::string_view> sdu_tokens;
    while (pos_ < tok_.size()) {
      const std::string_view kw = tok_[pos_++];
      if (kw == "num_tc") {
        if (!value("num_tc", s.num_tc)) return fail_;
        if (s.num_tc < 1 || s.num_tc > kMaxTrafficClasses) {
          return bad(TaprioError::kBadValue, "num_tc " + std::to_string(s.num_tc) + " is not in 1..8");
        }
        have_num_tc = true;
      } else if (kw == "map") {
        map_tokens = numbers_after();
        if (map_tokens.empty()) return bad(TaprioError::kSyntax, "map: no priorities given");
        have_map = true;
      } else if (kw == "queues") {
        for (auto q : words_after([](std::string_view w) { return w.find('@') != std::string_view::npos; })) {
          const auto at = q.find('@');
          int count = 0;
          int offset = 0;
          if (!parse_dec(q.substr(0, at), count) || !parse_dec(q.substr(at + 1), offset) || count < 1 ||
              offset < 0 || offset > 15) {
            return bad(TaprioError::kBadValue, "queues: '" + std::string(q) + "' is not count@offset");
          }
          s.queues.emplace_back(count, offset);
        }
        if (s.queues.empty()) return bad(TaprioError::kSyntax, "queues: no count@offset given");
      } else if (kw == "base-time") {
        if (!value("base-time", s.gcl.base_time_ns)) return fail_;
        have_base = true;
      } else if (kw == "cycle-time") {
        if (!value("cycle-time", s.gcl.cycle_time_ns)) return fail_;
        if (s.gcl.cycle_time_ns <= 0) return bad(TaprioError::kBadValue, "cycle-time must be positive");
      } else if (kw == "cycle-time-extension") {
        if (!value("cycle-time-extension", s.gcl.cycle_time_extension_ns)) return fail_;
      } else if (kw == "sched-entry") {
        const std::string name = "sched-entry " + std::to_string(s.gcl.entries.size());
        if (pos_ + 3 > tok_.size()) return bad(TaprioError::kSyntax, name + ": expected <command> <mask> <interval>");
        const std::string_view cmd = tok_[pos_];
        if (cmd == "H" || cmd == "R") {
          return bad(TaprioError::kUnsupported,
                     name + ": command " + std::string(cmd) + " (frame preemption) is not supported; use S");
        }
        if (cmd != "S") return bad(TaprioError::kSyntax, name + ": unknown command '" + std::string(cmd) + "'");
        std::uint32_t mask = 0;
        if (!parse_hex(tok_[pos_ + 1], mask)) {
          return bad(TaprioError::kSyntax, name + ": gate mask '" + std::string(tok_[pos_ + 1]) + "' is not hexadecimal");
        }
        if (mask > 0xFF) return bad(TaprioError::kBadValue, name + ": gate mask beyond 8 traffic classes");
        std::int64_t interval = 0;
        if (!parse_dec(tok_[pos_ + 2], interval)) {
          return bad(TaprioError::kSyntax, name + ": interval '" + std::string(tok_[pos_ + 2]) + "' is not a number of ns");
        }
        s.gcl.entries.push_back(GateEntry{static_cast<GateMask>(mask), interval});
        pos_ += 3;
      } else if (kw == "clockid") {
        if (pos_ >= tok_.size()) return bad(TaprioError::kSyntax, "clockid: value missing");
        const std::string_view c = tok_[pos_++];
        if (c != "CLOCK_TAI" && c != "CLOCK_REALTIME" && c != "CLOCK_BOOTTIME" && c != "CLOCK_MONOTONIC") {
          return bad(TaprioError::kUnsupported, "clockid '" + std::string(c) + "' is not a known clock");
        }
        s.clockid = std::string(c);
      } else if (kw == "flags") {
        if (pos_ >= tok_.size() || !parse_flags(tok_[pos_], s.flags)) {
          return bad(TaprioError::kSyntax, "flags: expected a number");
        }
        ++pos_;
      } else if (kw == "txtime-delay") {
        std::int64_t d = 0;
        if (!value("txtime-delay", d)) return fail_;
        if (d < 0) return bad(TaprioError::kBadValue, "txtime-delay must not be negative");
        s.txtime_delay_ns = d;
      } else if (kw == "max-sdu") {
        sdu_tokens = numbers_after();
        if (sdu_tokens.empty()) return bad(TaprioError::kSyntax, "max-sdu: no sizes given");
      } else {
        return bad(TaprioError::kSyntax, "unknown keyword '" + std::string(kw) + "'");
      }
    }
    if (!have_num_tc) return bad(TaprioError::kSyntax, "num_tc is missing");
    if (!have_base) return bad(TaprioError::kSyntax, "base-time is missing");
    if (have_map) {
      if (map_tokens.size() > 16) return bad(TaprioError::kBadValue, "map: more than 16 priorities");
      for (std::size_t p = 0; p < map_tokens.size(); ++p) {
        int tc = 0;
        if (!parse_dec(map_tokens[p], tc) || tc < 0 || tc >= s.num_tc) {
          return bad(TaprioError::kBadValue, "map: priority " + std::to_string(p) + " maps to '" +
                                                 std::string(map_tokens[p]) + "', not a class in 0.." +
                                                 std::to_string(s.num_tc - 1));
        }
        s.map[p] = tc;
      }
    } else {
      const auto std_map = TrafficClassMap::standard(s.num_tc);
      for (int p = 0; p < kPriorities; ++p) s.map[static_cast<std::size_t>(p)] = std_map->traffic_class(static_cast<std::uint8_t>(p));
    }
    if (!s.queues.empty() && s.queues.size() != static_cast<std::size_t>(s.num_tc)) {
      return bad(TaprioError::kBadValue, "queues: " + std::to_string(s.queues.size()) + " entries for num_tc " +
                                             std::to_string(s.num_tc));
    }
    if (sdu_tokens.size() > static_cast<std::size_t>(s.num_tc)) {
      return bad(TaprioError::kBadValue, "max-sdu: more sizes than traffic classes");
    }
    for (std::size_t c = 0; c < sdu_tokens.size(); ++c) {
      std::uint32_t v = 0;
      if (!parse_dec(sdu_tokens[c], v) || v > 65535) {
        return bad(TaprioError::kBadValue, "max-sdu: class " + std::to_string(c) + " size '" +
                                               std::string(sdu_tokens[c]) + "' is not in 0..65535");
      }
      s.max_sdu[c] = v;
    }
    limits.num_classes = s.num_tc;
    if (auto problem = validate(s.gcl, limits)) return bad(TaprioError::kBadSchedule, problem->message);
    TaprioParse ok;
    ok.schedule = std::move(s);
    return ok;
  }

 private:
  template <class T>
  bool value(const char* name, T& out) {
    if (pos_ >= tok_.size() || !parse_dec(tok_[pos_], out)) {
      fail_ = bad(TaprioError::kSyntax, std::string(name) + ": expected a number" +
                                            (pos_ < tok_.size() ? ", got '" + std::string(tok_[pos_]) + "'" : ""));
      return false;
    }
    ++pos_;
    return true;
  }

  template <class Pred>
  std::vector<std::string_view> words_after(Pred pred) {
    std::vector<std::string_view> out;
    while (pos_ < tok_.size() && pred(tok_[pos_])) out.push_back(tok_[pos_++]);
    return out;
  }

  std::vector<std::string_view> numbers_after() {
    return words_after([](std::string_view w) {
      return !w.empty() && w.find_first_not_of("0123456789") == std::string_view::npos;
    });
  }

  static TaprioParse bad(TaprioError e, std::string message) {
    TaprioParse p;
    p.error = e;
    p.message = std::move(message);
    return p;
  }

  std::vector<std::string_view> tok_;
  std::size_t pos_ = 0;
  TaprioParse fail_;
};

}  // namespace

TrafficClassMap TaprioSchedule::traffic_classes() const {
  std::array<int, kPriorities> m{};
  for (int p = 0; p < kPriorities; ++p) m[static_cast<std::size_t>(p)] = map[static_cast<std::size_t>(p)];
  if (auto custom = TrafficClassMap::custom(num_tc, m)) return *custom;
  return *TrafficClassMap::standard(1);  // unreachable for a parsed schedule
}

TaprioParse parse_taprio(std::string_view text, GclLimits limits) { return Parser(tokenize(text)).run(limits); }

std::string to_taprio(const TaprioSchedule& s) {
  std::ostringstream o;
  o << "taprio num_tc " << s.num_tc << " map";
  for (int m : s.map) o << ' ' << m;
  if (!s.queues.empty()) {
    o << " queues";
    for (const auto& [count, offset] : s.queues) o << ' ' << count << '@' << offset;
  }
  o << " base-time " << s.gcl.base_time_ns;
  for (const auto& e : s.gcl.entries) {
    static const char* hex = "0123456789abcdef";
    o << " sched-entry S " << hex[(e.gates >> 4) & 0xF] << hex[e.gates & 0xF] << ' ' << e.interval_ns;
  }
  if (s.gcl.cycle_time_ns > 0) o << " cycle-time " << s.gcl.cycle_time_ns;
  if (s.gcl.cycle_time_extension_ns > 0) o << " cycle-time-extension " << s.gcl.cycle_time_extension_ns;
  o << " clockid " << s.clockid;
  if (s.flags != 0) o << " flags 0x" << std::hex << s.flags << std::dec;
  if (s.txtime_delay_ns) o << " txtime-delay " << *s.txtime_delay_ns;
  bool any_sdu = false;
  for (auto v : s.max_sdu) any_sdu = any_sdu || v != 0;
  if (any_sdu) {
    o << " max-sdu";
    for (int c = 0; c < s.num_tc; ++c) o << ' ' << s.max_sdu[static_cast<std::size_t>(c)];
  }
  return o.str();
}

}  // namespace layersec::tsn
