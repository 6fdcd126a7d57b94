// The one In* packet counter of a SecY's MIB that a validate() call moved
// (shared by the MACsec attack and restart runners): compares the counters
// before and after, InPktsNoSA (an aggregate) skipped; "unknown" if none moved.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/macsec/secy.h"

namespace layersec::attack {

inline std::string counter_moved(const macsec::SecYStats& before, const macsec::SecYStats& after) {
  std::vector<std::uint64_t> b;
  before.for_each([&](std::string_view, std::uint64_t v) { b.push_back(v); });
  std::string moved;
  std::size_t i = 0;
  after.for_each([&](std::string_view name, std::uint64_t v) {
    const bool packet_counter = name.substr(0, 6) == "InPkts" && name != "InPktsNoSA";
    if (packet_counter && moved.empty() && v != b[i]) moved = std::string(name);
    ++i;
  });
  return moved.empty() ? std::string("unknown") : moved;
}

}  // namespace layersec::attack
