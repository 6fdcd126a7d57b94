// Hex helpers for vectors, CLI output and diagnostics. Never used on secrets
// except by test code and the explicit known-answer commands.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace layersec {

// Lower-case hex of `data`, no separators.
std::string to_hex(std::span<const std::uint8_t> data);
// Parses hex (upper or lower case; spaces, ':' and '-' between byte pairs are
// allowed). Returns nullopt on an odd digit count or a non-hex character.
std::optional<std::vector<std::uint8_t>> from_hex(std::string_view text);
// Like from_hex but aborts on bad input; for literals in tests and tables.
std::vector<std::uint8_t> hex_bytes(std::string_view text);

}  // namespace layersec
