#include "layersec/sv_io/lookup.h"

#include <stdexcept>

#include "layersec/sv/kdc.h"

namespace layersec::sv_io {

sv::Profile need_profile(const std::string& name) {
  auto p = sv::find_profile(name);
  if (!p) throw std::runtime_error("unknown profile " + name + " (use e.g. 4000/1 or LE-50Hz-80spc)");
  return *p;
}

sv::SecurityConfig need_scheme(const std::string& name) {
  auto s = sv::parse_scheme(name);
  if (!s) throw std::runtime_error("unknown authentication scheme " + name);
  return *s;
}

kex::KemScheme need_mlkem(const std::string& name) {
  auto k = kex::parse_scheme(name);
  if (!k || sv::kdc::wire_of_kem(*k) == 0) {
    throw std::runtime_error("--kem must be ml-kem-512, ml-kem-768 or ml-kem-1024");
  }
  return *k;
}

}  // namespace layersec::sv_io
