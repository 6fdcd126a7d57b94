#include "cli_checks.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace layersec::app {

namespace {

std::string num(double v) {
  std::ostringstream o;
  o.precision(15);
  o << v;
  return o.str();
}

}  // namespace

std::string check_finite_in(const std::string& text, double lo, double hi) {
  if (text.empty()) return "empty value: a number is required";
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return "'" + text + "' is not a number";
  if (!std::isfinite(v) || errno == ERANGE)
    return "'" + text + "' is not a finite number (nan, inf and overflow are refused)";
  if (v < lo || v > hi) return "'" + text + "' is outside " + num(lo) + ".." + num(hi);
  return {};
}

std::string check_whole_in(const std::string& text, std::uint64_t lo, std::uint64_t hi) {
  if (text.empty()) return "empty value: a whole number is required";
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::size_t start = hex ? 2 : 0;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    const bool ok = hex ? std::isxdigit(static_cast<unsigned char>(c)) != 0 : (c >= '0' && c <= '9');
    if (!ok) return "'" + text + "' is not a whole number (digits only: no sign, fraction or exponent)";
  }
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str() + start, &end, hex ? 16 : 10);
  if (errno == ERANGE || *end != '\0') return "'" + text + "' is too large";
  if (v < lo || v > hi)
    return "'" + text + "' is outside " + std::to_string(lo) + ".." + std::to_string(hi);
  return {};
}

std::string check_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path + ": " + std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return path + ": is a directory, not a regular file";
  if (!S_ISREG(st.st_mode)) return path + ": not a regular file (FIFO, device or socket refused)";
  return {};
}

std::string check_output_file(const std::string& path) {
  if (path == "-") return {};
  if (path.empty()) return "empty path";
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) return path + ": is a symbolic link (refused: it would be followed)";
    if (S_ISDIR(st.st_mode)) return path + ": is a directory, not a regular file";
    if (!S_ISREG(st.st_mode)) return path + ": not a regular file (FIFO, device or socket refused)";
    return {};
  }
  if (errno != ENOENT) return path + ": " + std::strerror(errno);
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0) return dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return dir + ": not a directory";
  return {};
}

std::string check_output_dir(const std::string& path) {
  if (path.empty()) return "empty path";
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};  // created by the command
    return path + ": " + std::strerror(errno);
  }
  if (S_ISLNK(st.st_mode)) return path + ": is a symbolic link (refused: give the real directory)";
  if (!S_ISDIR(st.st_mode)) return path + ": exists and is not a directory";
  return {};
}

CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator([lo, hi](std::string& s) { return check_finite_in(s, lo, hi); },
                        "FINITE in [" + num(lo) + ", " + num(hi) + "]");
}

CLI::Validator whole_in(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator([lo, hi](std::string& s) { return check_whole_in(s, lo, hi); },
                        "UINT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

const CLI::Validator kRegularFile(
    [](std::string& s) { return check_regular_file(s); }, "FILE");
const CLI::Validator kOutputFile(
    [](std::string& s) { return check_output_file(s); }, "OUTPUT");
const CLI::Validator kOutputDir(
    [](std::string& s) { return check_output_dir(s); }, "DIR");

}  // namespace layersec::app
