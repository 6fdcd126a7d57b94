#include "layersec/tsn/traffic_class.h"

namespace layersec::tsn {

namespace {

// IEEE 802.1Q-2018 Table 8-5: row = number of available traffic classes
// (1..8), column = priority 0..7.
constexpr std::array<std::array<int, kPriorities>, kMaxTrafficClasses> kTable85 = {{
    {0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 1, 2, 2},
    {0, 0, 1, 1, 2, 2, 3, 3},
    {0, 0, 1, 1, 2, 2, 3, 4},
    {1, 0, 2, 2, 3, 3, 4, 5},
    {1, 0, 2, 3, 4, 4, 5, 6},
    {1, 0, 2, 3, 4, 5, 6, 7},
}};

}  // namespace

std::optional<TrafficClassMap> TrafficClassMap::standard(int num_classes) {
  if (num_classes < 1 || num_classes > kMaxTrafficClasses) return std::nullopt;
  return TrafficClassMap(num_classes, kTable85[static_cast<std::size_t>(num_classes - 1)]);
}

std::optional<TrafficClassMap> TrafficClassMap::custom(int num_classes, const std::array<int, kPriorities>& class_of,
                                                       std::string* why) {
  if (num_classes < 1 || num_classes > kMaxTrafficClasses) {
    if (why) *why = "number of traffic classes " + std::to_string(num_classes) + " is not in 1..8";
    return std::nullopt;
  }
  for (int p = 0; p < kPriorities; ++p) {
    const int c = class_of[static_cast<std::size_t>(p)];
    if (c < 0 || c >= num_classes) {
      if (why) {
        *why = "priority " + std::to_string(p) + " maps to traffic class " + std::to_string(c) + ", not in 0.." +
               std::to_string(num_classes - 1);
      }
      return std::nullopt;
    }
  }
  return TrafficClassMap(num_classes, class_of);
}

}  // namespace layersec::tsn
