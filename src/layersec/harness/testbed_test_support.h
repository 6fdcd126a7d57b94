// Testbed options the harness tests share: one seed, the given security,
// key distribution, subscriber count and delivery.
#pragma once

#include "layersec/harness/testbed.h"

namespace layersec::harness {

inline TestbedOptions test_options(Security s, KeyDistribution k, int n = 1, bool multicast = false) {
  TestbedOptions o;
  o.security = s;
  o.keys = k;
  o.subscribers = n;
  o.multicast = multicast;
  o.seed = 42;
  return o;
}

}  // namespace layersec::harness
