// The application of `layersec node`: what the configuration's "test"
// section asks for (node_config.h), printed through a Printer.
//
//   handlers  availability changes, security rejections, every notification
//             of each required service (one catch-all handler per client:
//             the configuration names eventgroups, not events) and the
//             served test methods (echo, fixed payload or error reply);
//   traffic   each publish entry notifies (fields: set_field) at its interval
//             and each request entry calls its method while the service is
//             available, on timers at fixed multiples of the interval from
//             the first one (no drift when a callback runs late).
//
// Everything runs on the event loop's thread; the counters are what the final
// "counters" line reports under "test".
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/time.h"
#include "layersec/node/node_config.h"
#include "layersec/node/printer.h"
#include "layersec/someip/runtime.h"

namespace layersec::net {
class EventLoop;
}

namespace layersec::node {

struct TestCounters {
  std::uint64_t published = 0;
  std::uint64_t publish_failed = 0;
  std::uint64_t requests_sent = 0;
  std::uint64_t requests_failed = 0;
  std::uint64_t requests_skipped_unavailable = 0;
  std::uint64_t responses_ok = 0;
  std::uint64_t responses_error = 0;
  std::uint64_t responses_timeout = 0;
  std::uint64_t requests_served = 0;
  std::uint64_t events_received = 0;
  std::uint64_t rejections = 0;
};
[[nodiscard]] nlohmann::json to_json(const TestCounters& t);

class TestTraffic {
 public:
  // None is owned; all must outlive the object (and the timers it arms).
  TestTraffic(const NodeConfig& config, someip::Runtime& runtime, net::EventLoop& loop, Printer& printer);

  // Registers the handlers (before Runtime::start). Throws std::logic_error
  // when the runtime refuses a method the configuration loader validated.
  void install_handlers();
  // Arms the publish and request timers, the first of each now.
  void start();
  [[nodiscard]] const TestCounters& counters() const { return counters_; }

 private:
  struct PublishState {
    std::uint64_t sent = 0;
    bool failing = false;
    std::vector<std::uint8_t> payload;
  };
  struct RequestState {
    std::uint64_t sent = 0;
    std::vector<std::uint8_t> payload;
  };

  [[nodiscard]] bool is_field(std::uint16_t service, std::uint16_t instance, std::uint16_t event) const;
  void schedule_publish(std::size_t i, TimePoint at);
  void schedule_request(std::size_t i, TimePoint at);
  void note_request(const TestRequest& q, std::optional<someip::RuntimeError> err);
  void on_response(const someip::ResponseResult& r, TimePoint sent_at);

  const NodeConfig& cfg_;
  someip::Runtime& runtime_;
  net::EventLoop& loop_;
  Printer& printer_;
  TestCounters counters_;
  std::vector<PublishState> publish_;
  std::vector<RequestState> requests_;
};

}  // namespace layersec::node
