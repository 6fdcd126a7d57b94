#include "layersec/node/test_traffic.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "layersec/net/event_loop.h"

namespace layersec::node {
namespace {

using nlohmann::json;
using namespace someip;

// Fills `p` (size fixed by the caller): big-endian sequence number in the
// first min(4, size) bytes, 0xA5 filler after.
void fill_sequenced(std::vector<std::uint8_t>& p, std::uint64_t seq) {
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = 0xA5;
  const std::size_t n = std::min<std::size_t>(4, p.size());
  for (std::size_t i = 0; i < n; ++i)
    p[i] = static_cast<std::uint8_t>(seq >> (8 * (n - 1 - i)));
}

}  // namespace

json to_json(const TestCounters& t) {
  return {{"published", t.published},
          {"publish_failed", t.publish_failed},
          {"requests_sent", t.requests_sent},
          {"requests_failed", t.requests_failed},
          {"requests_skipped_unavailable", t.requests_skipped_unavailable},
          {"responses_ok", t.responses_ok},
          {"responses_error", t.responses_error},
          {"responses_timeout", t.responses_timeout},
          {"requests_served", t.requests_served},
          {"events_received", t.events_received},
          {"rejections", t.rejections}};
}

TestTraffic::TestTraffic(const NodeConfig& config, someip::Runtime& runtime, net::EventLoop& loop, Printer& printer)
    : cfg_(config),
      runtime_(runtime),
      loop_(loop),
      printer_(printer),
      publish_(config.test.publish.size()),
      requests_(config.test.requests.size()) {}

void TestTraffic::install_handlers() {
  runtime_.on_availability([this](std::uint16_t service, std::uint16_t instance, bool available) {
    printer_.emit({{"type", "availability"}, {"service", service}, {"instance", instance}, {"available", available}},
                  "service " + hex16(service) + "." + hex16(instance) + (available ? " available" : " unavailable"));
  });
  runtime_.on_rejection([this](const SecurityRejection& r) {
    ++counters_.rejections;
    const std::string reason(secoc::to_string(r.reason));
    printer_.emit({{"type", "rejection"},
                   {"service", r.service_id},
                   {"instance", r.instance_id},
                   {"id", r.method_or_event},
                   {"sd", r.sd},
                   {"unprotected", r.unprotected},
                   {"reason", reason},
                   {"source", r.source.to_string()}},
                  "SECURITY REJECTION " + (r.sd ? std::string("SD message") : hex16(r.service_id) + "." +
                                               hex16(r.instance_id) + " id " + hex16(r.method_or_event)) +
                      " from " + r.source.to_string() + ": " + reason +
                      (r.unprotected ? " (unprotected)" : ""));
  });
  // The client config names eventgroups, not events: one catch-all handler
  // per required service prints every notification that passes the runtime.
  for (const ClientConfig& c : cfg_.runtime.clients) {
    runtime_.on_event(c.service_id, Runtime::kAnyEvent, [this](const Notification& n) {
      ++counters_.events_received;
      printer_.emit({{"type", "event"},
                     {"service", n.service_id},
                     {"instance", n.instance_id},
                     {"event", n.event_id},
                     {"multicast", n.multicast},
                     {"size", n.payload.size()},
                     {"payload", payload_hex(n.payload)},
                     {"source", n.source.to_string()}},
                    "event " + hex16(n.service_id) + "." + hex16(n.instance_id) + " " + hex16(n.event_id) +
                        (n.multicast ? " (multicast)" : "") + " " + std::to_string(n.payload.size()) +
                        " bytes " + payload_hex(n.payload) + " from " + n.source.to_string());
    });
  }
  for (const TestServe& s : cfg_.test.serve) {
    auto st = runtime_.set_method_handler(
        s.service, s.instance, s.method, [this, s](const Request& rq, Reply& reply) {
          ++counters_.requests_served;
          switch (s.reply) {
            case ReplyKind::kEcho: reply.payload.assign(rq.payload.begin(), rq.payload.end()); break;
            case ReplyKind::kFixed: reply.payload = s.payload; break;
            case ReplyKind::kError: reply.code = s.code; break;
          }
          printer_.emit({{"type", "request"},
                         {"service", rq.service_id},
                         {"instance", rq.instance_id},
                         {"method", rq.method_id},
                         {"client", rq.client_id},
                         {"session", rq.session_id},
                         {"fire_and_forget", rq.fire_and_forget},
                         {"size", rq.payload.size()},
                         {"source", rq.source.to_string()}},
                        "request " + hex16(rq.service_id) + "." + hex16(rq.instance_id) + " method " +
                            hex16(rq.method_id) + " client " + hex16(rq.client_id) + " session " +
                            std::to_string(rq.session_id) + " " + std::to_string(rq.payload.size()) +
                            " bytes from " + rq.source.to_string());
        });
    if (!st.ok())
      throw std::logic_error("set_method_handler refused a validated method: " + std::string(to_string(st.error())));
  }
}

void TestTraffic::start() {
  for (std::size_t i = 0; i < cfg_.test.publish.size(); ++i) schedule_publish(i, loop_.now());
  for (std::size_t i = 0; i < cfg_.test.requests.size(); ++i) schedule_request(i, loop_.now());
}

bool TestTraffic::is_field(std::uint16_t service, std::uint16_t instance, std::uint16_t event) const {
  for (const auto& s : cfg_.runtime.services)
    if (s.service_id == service && s.instance_id == instance)
      for (const auto& e : s.events)
        if (e.event_id == event) return e.is_field;
  return false;
}

// Timers are scheduled at fixed multiples of the interval from the first
// one (no drift when a callback runs late).
void TestTraffic::schedule_publish(std::size_t i, TimePoint at) {
  loop_.add_timer(at, [this, i, at] {
    const TestPublish& p = cfg_.test.publish[i];
    PublishState& st = publish_[i];
    if (p.count != 0 && st.sent >= p.count) return;
    st.payload.resize(p.payload_size);
    fill_sequenced(st.payload, st.sent + 1);
    auto r = is_field(p.service, p.instance, p.event)
                 ? runtime_.set_field(p.service, p.instance, p.event, st.payload)
                 : runtime_.notify(p.service, p.instance, p.event, st.payload);
    ++st.sent;
    if (r.ok()) {
      ++counters_.published;
      st.failing = false;
    } else {
      ++counters_.publish_failed;
      if (!st.failing)  // one line per failure streak, not per tick
        printer_.emit({{"type", "error"}, {"op", "notify"}, {"service", p.service}, {"event", p.event},
                       {"error", std::string(to_string(r.error()))}},
                      "notify " + hex16(p.service) + " " + hex16(p.event) + " failed: " +
                          std::string(to_string(r.error())));
      st.failing = true;
    }
    schedule_publish(i, at + p.interval);
  });
}

void TestTraffic::schedule_request(std::size_t i, TimePoint at) {
  loop_.add_timer(at, [this, i, at] {
    const TestRequest& q = cfg_.test.requests[i];
    RequestState& st = requests_[i];
    if (q.count != 0 && st.sent >= q.count) return;
    if (!runtime_.available(q.service, q.instance)) {
      ++counters_.requests_skipped_unavailable;
      schedule_request(i, at + q.interval);
      return;
    }
    if (q.payload) {
      st.payload = *q.payload;
    } else {
      st.payload.resize(q.payload_size);
      fill_sequenced(st.payload, st.sent + 1);
    }
    ++st.sent;
    if (q.fire_and_forget) {
      auto r = runtime_.fire_and_forget(q.service, q.instance, q.method, st.payload);
      note_request(q, r.ok() ? std::nullopt : std::optional<RuntimeError>(r.error()));
    } else {
      const TimePoint sent_at = loop_.now();
      auto r = runtime_.request(
          q.service, q.instance, q.method, st.payload,
          [this, sent_at](const ResponseResult& res) { on_response(res, sent_at); }, q.timeout);
      note_request(q, r.ok() ? std::nullopt : std::optional<RuntimeError>(r.error()));
    }
    schedule_request(i, at + q.interval);
  });
}

void TestTraffic::note_request(const TestRequest& q, std::optional<RuntimeError> err) {
  if (!err) {
    ++counters_.requests_sent;
    return;
  }
  ++counters_.requests_failed;
  printer_.emit({{"type", "error"}, {"op", "request"}, {"service", q.service}, {"method", q.method},
                 {"error", std::string(to_string(*err))}},
                "request " + hex16(q.service) + " method " + hex16(q.method) + " failed: " +
                    std::string(to_string(*err)));
}

void TestTraffic::on_response(const ResponseResult& r, TimePoint sent_at) {
  const double rtt_us = (loop_.now() - sent_at).us();
  std::string kind = "response";
  if (r.code == ReturnCode::kOk) {
    ++counters_.responses_ok;
  } else if (r.code == ReturnCode::kTimeout) {
    ++counters_.responses_timeout;
    kind = "timeout";
  } else {
    ++counters_.responses_error;
    kind = "error_response";
  }
  const std::string code(return_code_name(static_cast<std::uint8_t>(r.code)));
  printer_.emit({{"type", kind},
                 {"service", r.service_id},
                 {"instance", r.instance_id},
                 {"method", r.method_id},
                 {"session", r.session_id},
                 {"code", code},
                 {"size", r.payload.size()},
                 {"payload", payload_hex(r.payload)},
                 {"rtt_us", static_cast<std::int64_t>(rtt_us)}},
                kind + " " + hex16(r.service_id) + "." + hex16(r.instance_id) + " method " + hex16(r.method_id) +
                    " session " + std::to_string(r.session_id) + " " + code + " " +
                    std::to_string(r.payload.size()) + " bytes, rtt " + std::to_string(static_cast<std::int64_t>(rtt_us)) +
                    " us");
}

}  // namespace layersec::node
