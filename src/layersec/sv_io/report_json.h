// JSON renderings of the sv core's counters, shared by sv decode and sv
// subscribe (the field names are part of their output).
#pragma once

#include <nlohmann/json.hpp>

#include "layersec/sv/subscriber.h"

namespace layersec::sv_io {

// One stream's counters as a JSON object, one key per StreamCounters field
// (same names: received, delivered, gaps, ..., key_changes).
nlohmann::json counters_json(const sv::StreamCounters& c);

}  // namespace layersec::sv_io
