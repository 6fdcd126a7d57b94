// Number formatting shared by the result writers (tables, CSV, goal lines,
// the bench reports): fixed-point text with a given number of digits, "-"
// for a missing value, printf-style lines.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <optional>
#include <string>

namespace layersec::harness {

// `v` with `digits` digits after the point ("%.*f"): format_fixed(1.25, 1) == "1.2".
[[nodiscard]] inline std::string format_fixed(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// format_fixed of the value, or `missing` when there is none.
[[nodiscard]] inline std::string format_optional(const std::optional<double>& v, int digits = 2,
                                                 const std::string& missing = "-") {
  return v ? format_fixed(*v, digits) : missing;
}

// printf-style formatting into a string (the benches' column layouts).
[[nodiscard]] inline std::string format_printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline std::string format_printf(const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string out(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, again);
  va_end(again);
  return out;
}

}  // namespace layersec::harness
