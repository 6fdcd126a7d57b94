// RuntimeCounters as JSON, one layout for every tool that prints them
// (`layersec node`, the netns scenario nodes): the counter names of
// runtime.h, "rx_dropped" by DropReason name and "errors_sent" by return
// code name (only non-zero entries in those two).
#pragma once

#include <nlohmann/json.hpp>

#include "layersec/someip/runtime.h"

namespace layersec::someip {

[[nodiscard]] nlohmann::json to_json(const RuntimeCounters& c);

}  // namespace layersec::someip
