// Names the SV tools accept, looked up or refused with a message that says
// what would have been accepted (start-up errors, std::runtime_error).
#pragma once

#include <string>

#include "layersec/kex/kem.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/security.h"

namespace layersec::sv_io {

// A profile by name or RATE/ASDUS (sv::find_profile).
sv::Profile need_profile(const std::string& name);
// An authentication scheme by name (sv::parse_scheme).
sv::SecurityConfig need_scheme(const std::string& name);
// An ML-KEM set the KDC supports (ml-kem-512, ml-kem-768, ml-kem-1024).
kex::KemScheme need_mlkem(const std::string& name);

}  // namespace layersec::sv_io
