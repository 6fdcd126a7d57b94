#include "layersec/sv_io/samples.h"

#include <cmath>

namespace layersec::sv_io {

void fill_samples(std::vector<sv::Sample>& s, std::size_t asdus, std::uint64_t first_sample, std::uint32_t rate) {
  static const double kTwoPi = 6.283185307179586;
  for (std::size_t a = 0; a < asdus; ++a) {
    const double t = static_cast<double>(first_sample + a) / rate;
    sv::Sample* ch = &s[a * 8];
    std::int32_t isum = 0, vsum = 0;
    for (int ph = 0; ph < 3; ++ph) {
      const double w = kTwoPi * 50.0 * t - ph * kTwoPi / 3.0;
      ch[ph] = sv::Sample{static_cast<std::int32_t>(1000.0 * std::sin(w)), 0};
      ch[4 + ph] = sv::Sample{static_cast<std::int32_t>(6350000.0 * std::sin(w)), 0};  // 63.5 kV
      isum += ch[ph].value;
      vsum += ch[4 + ph].value;
    }
    ch[3] = sv::Sample{isum, 0};
    ch[7] = sv::Sample{vsum, 0};
  }
}

}  // namespace layersec::sv_io
