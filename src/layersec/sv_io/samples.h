// The samples the SV tools publish (sv pcap, sv publish, bench sv):
// deterministic and plausible, so captures look like a real merging unit's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "layersec/sv/dataset.h"

namespace layersec::sv_io {

// Fills `asdus` ASDUs of the 4I+4U dataset (8 channels each, so `s` holds at
// least asdus * 8 samples) with a 50 Hz three-phase set at `rate` samples per
// second, starting at sample number `first_sample`: currents in mA (1 A
// peak), voltages in 10 mV (63.5 kV peak) as 9-2LE scales them, each
// neutral the sum of its phases, quality 0.
void fill_samples(std::vector<sv::Sample>& s, std::size_t asdus, std::uint64_t first_sample, std::uint32_t rate);

}  // namespace layersec::sv_io
