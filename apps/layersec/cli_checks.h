// Validators for numeric and file options, shared by every subcommand.
//
// CLI11 2.1 converts "-1" to 2^64-1 for unsigned options and lets "nan"
// through CLI::Range and CLI::NonNegativeNumber, so no numeric option uses
// those alone: every number goes through one of these checks, which look at
// the text before it is converted.
//
//   finite_in(lo, hi)  a finite decimal number (no nan/inf) with lo <= x <= hi
//   whole_in(lo, hi)   an unsigned whole number (decimal, or 0x hex), no sign,
//                      no exponent, lo <= x <= hi
//   kRegularFile       an existing regular file (a FIFO, device, socket or
//                      directory is refused, so reading it cannot block)
//   kOutputFile        a file to be written: "-" (stdout), or a path that is
//                      not a symlink, whose directory exists, and that is a
//                      regular file if it exists (checked before the work is
//                      done; the write itself goes through base/file.h)
//   kOutputDir         a results folder: an existing directory (not reached
//                      through a symlink), or a path that does not exist yet
//
// The help text shows these as FILE, OUTPUT and DIR, and the numeric ones as
// "FINITE in [lo, hi]" / "UINT in [lo, hi]" (tests/cli/cli_bad_input.sh
// reads them from --help).
//
// Each failure message names the rule broken; CLI11 prefixes the option.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace layersec::app {

CLI::Validator finite_in(double lo, double hi);
CLI::Validator whole_in(std::uint64_t lo, std::uint64_t hi);
extern const CLI::Validator kRegularFile;
extern const CLI::Validator kOutputFile;
extern const CLI::Validator kOutputDir;

// The checks themselves, for values that do not come through CLI11 (an
// empty string means the value is valid).
std::string check_finite_in(const std::string& text, double lo, double hi);
std::string check_whole_in(const std::string& text, std::uint64_t lo, std::uint64_t hi);
std::string check_regular_file(const std::string& path);
std::string check_output_file(const std::string& path);
std::string check_output_dir(const std::string& path);

}  // namespace layersec::app
