#include "layersec/secoc/state_store.h"

#include <sstream>

namespace layersec::secoc {

std::string serialize_state(const PersistedState& s) {
  std::ostringstream o;
  o << "layersec-secoc-state 1\n" << "tx_trip " << s.tx_trip << "\n";
  for (const auto& r : s.rx) o << "rx " << r.channel << " " << r.trip << " " << r.reset << "\n";
  o << "end\n";
  return o.str();
}

Result<PersistedState, StoreError> parse_state(const std::string& text) {
  std::istringstream in(text);
  std::string magic;
  int version = 0;
  if (!(in >> magic >> version) || magic != "layersec-secoc-state" || version != 1)
    return Err(StoreError::kCorrupt);
  PersistedState s;
  bool have_trip = false;
  std::string word;
  while (in >> word) {
    if (word == "tx_trip") {
      if (have_trip || !(in >> s.tx_trip)) return Err(StoreError::kCorrupt);
      have_trip = true;
    } else if (word == "rx") {
      PersistedState::RxSync r;
      if (!(in >> r.channel >> r.trip >> r.reset)) return Err(StoreError::kCorrupt);
      s.rx.push_back(r);
    } else if (word == "end") {
      std::string extra;
      if (in >> extra || !have_trip) return Err(StoreError::kCorrupt);
      return s;
    } else {
      return Err(StoreError::kCorrupt);
    }
  }
  return Err(StoreError::kCorrupt);  // no "end": truncated
}

std::string_view to_string(StoreError e) {
  switch (e) {
    case StoreError::kIo: return "cannot be read or written";
    case StoreError::kCorrupt: return "corrupt";
    case StoreError::kMissing: return "missing";
  }
  return "unknown";
}

}  // namespace layersec::secoc
