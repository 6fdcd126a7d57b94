// 802.1Q priority (PCP) to traffic class mapping.
//
// A port has 1 to 8 traffic classes; class 0 is the lowest. The default
// mapping is IEEE 802.1Q-2018 Table 8-5 ("Recommended priority to traffic
// class mappings"): for each number of available classes, priority 1
// (background) is below priority 0 (best effort) once there are six or more
// classes. A user may override it (a taprio `map`, a node configuration).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace layersec::tsn {

inline constexpr int kMaxTrafficClasses = 8;
inline constexpr int kPriorities = 8;  // PCP 0..7

class TrafficClassMap {
 public:
  // Table 8-5 for `num_classes` classes; std::nullopt unless 1 <= num_classes <= 8.
  [[nodiscard]] static std::optional<TrafficClassMap> standard(int num_classes);
  // An explicit map: class_of[pcp] for PCP 0..7. std::nullopt (and `why`
  // naming the priority) if a class is >= num_classes or num_classes is out
  // of 1..8.
  [[nodiscard]] static std::optional<TrafficClassMap> custom(int num_classes, const std::array<int, kPriorities>& class_of,
                                                             std::string* why = nullptr);

  [[nodiscard]] int num_classes() const { return num_classes_; }
  // Precondition: pcp <= 7 (callers pass a decoded 3-bit field).
  [[nodiscard]] int traffic_class(std::uint8_t pcp) const { return class_of_[pcp & 7u]; }

 private:
  TrafficClassMap(int n, const std::array<int, kPriorities>& m) : num_classes_(n), class_of_(m) {}
  int num_classes_;
  std::array<int, kPriorities> class_of_;
};

}  // namespace layersec::tsn
