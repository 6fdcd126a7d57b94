#include "layersec/ptp/bmca.h"

#include <tuple>

namespace layersec::ptp {

bool better(const PriorityVector& a, const PriorityVector& b) {
  const auto key = [](const PriorityVector& v) {
    return std::make_tuple(v.priority1, v.quality.clock_class, v.quality.clock_accuracy,
                           v.quality.offset_scaled_log_variance, v.priority2, v.grandmaster_identity,
                           v.steps_removed, v.source.clock_identity, v.source.port_number);
  };
  return key(a) < key(b);
}

PriorityVector vector_of(const Message& m) {
  PriorityVector v;
  v.priority1 = m.announce.priority1;
  v.quality = m.announce.quality;
  v.priority2 = m.announce.priority2;
  v.grandmaster_identity = m.announce.grandmaster_identity;
  v.steps_removed = m.announce.steps_removed;
  v.source = m.header.source;
  return v;
}

}  // namespace layersec::ptp
