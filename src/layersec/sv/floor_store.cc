#include "layersec/sv/floor_store.h"

namespace layersec::sv {

std::string_view to_string(FloorStoreError e) {
  switch (e) {
    case FloorStoreError::kIo: return "SV floor state could not be written or read";
    case FloorStoreError::kCorrupt: return "SV floor state is corrupt";
  }
  return "unknown SV floor state error";
}

std::string_view to_string(FloorError e) {
  switch (e) {
    case FloorError::kMissing: return "no persisted counter floor for a secured stream (not a first start)";
    case FloorError::kStore: return "the counter floor store failed";
    case FloorError::kCorrupt: return "the counter floor state is corrupt";
    case FloorError::kBadReserve: return "the floor reservation must be 1 or more frames";
  }
  return "unknown floor error";
}

Result<std::optional<std::uint64_t>, FloorStoreError> MemoryFloorStore::load(const FloorKey& key) {
  if (fail_loads_) return Err(FloorStoreError::kIo);
  auto it = records_.find(key);
  if (it == records_.end()) return std::optional<std::uint64_t>{};
  return std::optional<std::uint64_t>{it->second};
}

Status<FloorStoreError> MemoryFloorStore::save(const FloorKey& key, std::uint64_t resume) {
  if (fail_saves_) return Err(FloorStoreError::kIo);
  records_[key] = resume;
  ++saves_;
  return {};
}

}  // namespace layersec::sv
