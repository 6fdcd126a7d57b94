// MethodDispatcher: the server side of a runtime's requests. A request that
// arrives on a service port goes through the error policy (error.h) with the
// services offered on that port as the ServiceTable, then the SecOC filter
// (a bound id is verified before anything is answered, errors included),
// then to a field getter or setter or the method's handler; the answer (a
// RESPONSE, or an ERROR with the handler's code) is serialised, protected and
// sent back to the request's source.
//
// Fail closed: no unauthenticated answer leaves a port that serves a SecOC
// service, and an answer whose id has no tx binding is not sent
// (secoc_unbound_refused). Handlers may call the runtime, replace their own
// handler or stop the runtime while they run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "layersec/base/result.h"
#include "layersec/someip/event_publisher.h"
#include "layersec/someip/message.h"
#include "layersec/someip/message_sender.h"
#include "layersec/someip/runtime_config.h"
#include "layersec/someip/runtime_types.h"
#include "layersec/someip/secoc_filter.h"

namespace layersec::someip {

class MethodDispatcher {
 public:
  // What the dispatcher needs from the runtime.
  class Delegate {
   public:
    virtual ~Delegate() = default;
    // A field setter stored a new value of `e` (of offered service number
    // `service`): notify the field's subscribers.
    virtual void on_field_set(std::size_t service, EventPublisher::Event& e) = 0;
    // False once a handler stopped the runtime: no answer is sent.
    [[nodiscard]] virtual bool running() const = 0;
  };

  // None is owned; all must outlive the dispatcher.
  MethodDispatcher(const RuntimeConfig& config, SecocFilter& secoc, MessageSender& sender, EventPublisher& events,
                   RuntimeCounters& counters, Delegate& delegate);

  // Registers the handler of `method` of (service, instance). kNotConfigured
  // when the service or the method (or field getter/setter) is not offered.
  Status<RuntimeError> set_handler(std::uint16_t service, std::uint16_t instance, std::uint16_t method,
                                   MethodHandler handler);
  // A REQUEST or REQUEST_NO_RETURN received by unicast on `port`.
  void serve(std::uint16_t port, const Endpoint& source, const MessageView& m);
  // Answers `request` with an ERROR `code` (protected with `route` when set).
  void send_error(std::uint16_t port, const Endpoint& to, const Header& request, ReturnCode code,
                  std::optional<SecocRoute> route);

 private:
  [[nodiscard]] int service_on_port(std::uint16_t service, std::uint16_t port) const;
  [[nodiscard]] bool port_uses_secoc(std::uint16_t port) const;
  bool serve_field(std::size_t service, std::uint16_t method, ByteSpan payload);

  const RuntimeConfig& cfg_;
  SecocFilter& secoc_;
  MessageSender& sender_;
  EventPublisher& events_;
  RuntimeCounters& counters_;
  Delegate& delegate_;
  // Per offered service; shared_ptr: a handler may replace itself while it runs.
  std::vector<std::unordered_map<std::uint16_t, std::shared_ptr<MethodHandler>>> handlers_;
  Reply reply_;  // storage reused between requests
};

}  // namespace layersec::someip
