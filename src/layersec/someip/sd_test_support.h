// Test support for the SD state machine tests (sd_client_test.cc,
// sd_server_test.cc): a deterministic random source and option helpers.
// Header-only, test code only.
#pragma once

#include "layersec/someip/sd_types.h"

namespace layersec::someip::testing_support {

// Returns lo + fixed (clamped to hi): deterministic initial delays.
class FixedRandom final : public RandomSource {
 public:
  explicit FixedRandom(Duration d) : d_(d) {}
  Duration uniform(Duration lo, Duration hi) override {
    const Duration v = lo + d_;
    return v > hi ? hi : v;
  }

 private:
  Duration d_;
};

// The resolved options of an entry that carries one endpoint option.
inline SdEntryOptions endpoint_opts(const Endpoint& ep) {
  SdEntryOptions o;
  o.items[0] = endpoint_option(ep);
  o.count = 1;
  return o;
}

}  // namespace layersec::someip::testing_support
