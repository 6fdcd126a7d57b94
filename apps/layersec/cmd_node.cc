// `layersec node --config FILE [--duration SEC] [--json] [--seed N]`: runs one
// SOME/IP node on real UDP sockets (net::EventLoop + someip::SocketTransport +
// someip::Runtime, plus a secoc::Engine when the file has a "secoc" section).
// The node offers and requires what the file configures, serves the "test"
// methods, publishes the "test" events and sends the "test" requests, and
// prints every availability change, notification, request served, response
// and security rejection as one line on stdout (JSON with --json, a readable
// line otherwise). SIGINT / SIGTERM or --duration end it; final counters are
// printed last. Exit status: 0 after a clean run, 2 for a configuration
// error, 3 when the node cannot start (sockets, SecOC state file, keys).
//
// Keys are loaded by the configuration loader (0600 only), installed into the
// engine and wiped; only key ids are printed.
#include <poll.h>
#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/hex.h"
#include "layersec/net/event_loop.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/counters_json.h"
#include "layersec/someip/node_config.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/socket_transport.h"

namespace layersec::app {
namespace {

using nlohmann::json;
using namespace layersec::someip;

constexpr int kExitConfig = 2;
constexpr int kExitStart = 3;
constexpr std::size_t kMaxPrintedPayload = 64;  // bytes of payload shown per line

struct NodeOptions {
  std::string config;
  double duration_s = 0;  // 0 = until a signal
  bool json = false;
  bool first_start = false;  // SecOC: create a missing state file (first provisioning)
  std::optional<std::uint64_t> seed;
};

std::string hex16(std::uint32_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%04x", static_cast<unsigned>(v & 0xFFFF));
  return b;
}

std::string payload_hex(ByteSpan p) {
  return to_hex(p.first(std::min(p.size(), kMaxPrintedPayload))) + (p.size() > kMaxPrintedPayload ? "..." : "");
}

// One line per observation on stdout, flushed so a reader sees it at once.
class Printer {
 public:
  Printer(bool json_lines, const Clock& clock) : json_(json_lines), clock_(clock), start_(clock.now()) {}
  void emit(json j, const std::string& human) {
    const double t_ms = (clock_.now() - start_).ms();
    if (json_) {
      j["t_ms"] = static_cast<double>(static_cast<std::int64_t>(t_ms * 1000)) / 1000.0;
      std::cout << j.dump() << '\n';
    } else {
      char t[32];
      std::snprintf(t, sizeof t, "[%10.3f ms] ", t_ms);
      std::cout << t << human << '\n';
    }
    std::cout.flush();
  }

 private:
  bool json_;
  const Clock& clock_;
  TimePoint start_;
};

// SIGINT/SIGTERM through a signalfd watched by the loop. The signals are
// blocked for the node's lifetime and restored afterwards (a signal that
// arrived meanwhile is consumed, not delivered late).
class SignalWatch {
 public:
  SignalWatch() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    fd_ = ::signalfd(-1, &set_, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd_ < 0) {
      pthread_sigmask(SIG_SETMASK, &old_, nullptr);
      throw std::runtime_error("signalfd failed");
    }
  }
  ~SignalWatch() {
    drain();
    ::close(fd_);
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;
  [[nodiscard]] int fd() const { return fd_; }
  // Reads pending signals; returns the last one (0 if none).
  int drain() {
    int last = 0;
    signalfd_siginfo info{};
    while (::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info))
      last = static_cast<int>(info.ssi_signo);
    return last;
  }

 private:
  sigset_t set_{};
  sigset_t old_{};
  int fd_ = -1;
};

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

// Fills `p` (size fixed by the caller): big-endian sequence number in the
// first min(4, size) bytes, 0xA5 filler after.
void fill_sequenced(std::vector<std::uint8_t>& p, std::uint64_t seq) {
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = 0xA5;
  const std::size_t n = std::min<std::size_t>(4, p.size());
  for (std::size_t i = 0; i < n; ++i)
    p[i] = static_cast<std::uint8_t>(seq >> (8 * (n - 1 - i)));
}

json engine_json(const secoc::VerifyCounters& v) {
  json rejected = json::object();
  for (std::size_t r = 0; r < secoc::kRejectionCount; ++r)
    if (v.rejected[r]) rejected[std::string(secoc::to_string(static_cast<secoc::Rejection>(r)))] = v.rejected[r];
  return {{"accepted", v.accepted},
          {"accepted_previous_key", v.accepted_previous_key},
          {"accepted_next_cycle", v.accepted_next_cycle},
          {"rejected", rejected}};
}

json test_json(const TestCounters& t) {
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

// Everything one node run owns, in construction order.
class Node {
 public:
  Node(NodeConfig cfg, const NodeOptions& opts)
      : cfg_(std::move(cfg)), opts_(opts), loop_(clock_), printer_(opts.json, clock_) {}

  int run() {
    // Blocked from here on, so a signal during start-up still ends the run
    // cleanly (it is read once the loop runs).
    SignalWatch signals;
    const IpAddress& u = cfg_.unicast;
    const auto local = net::Ipv4Address::from_octets(u.bytes[0], u.bytes[1], u.bytes[2], u.bytes[3]);
    transport_ = std::make_unique<SocketTransport>(loop_, local, cfg_.device);
    const std::uint64_t seed = opts_.seed ? *opts_.seed : std::random_device{}();
    random_ = std::make_unique<SeededRandom>(seed);
    try {
      runtime_ = std::make_unique<Runtime>(cfg_.runtime, *transport_, *random_);
    } catch (const std::invalid_argument& e) {
      std::cerr << "layersec node: " << opts_.config << ": " << e.what() << "\n";
      return kExitConfig;
    }
    if (cfg_.secoc) {
      if (const int rc = start_secoc(); rc != 0) return rc;
    }
    install_handlers();
    if (auto st = runtime_->start(); !st.ok()) {
      std::cerr << "layersec node: cannot start: " << to_string(st.error())
                << " (transport errno " << transport_->last_errno() << ")\n";
      return kExitStart;
    }
    print_started();
    start_test_traffic();

    int stop_signal = 0;
    loop_.watch(signals.fd(), POLLIN, [&](short) {
      stop_signal = signals.drain();
      if (stop_signal != 0) loop_.stop();
    });
    const TimePoint deadline =
        opts_.duration_s > 0
            ? clock_.now() + Duration::nanoseconds(static_cast<std::int64_t>(opts_.duration_s * 1e9))
            : TimePoint::max();
    loop_.run_until(deadline);
    loop_.unwatch(signals.fd());
    runtime_->stop();
    print_final(stop_signal);
    return 0;
  }

 private:
  int start_secoc() {
    NodeSecoc& s = *cfg_.secoc;
    store_ = std::make_unique<secoc::FileStateStore>(s.state_file);
    secoc::StartOptions so;
    so.first_start = opts_.first_start;
    so.now = freshness_clock_.now();
    auto started = secoc::Engine::start(s.engine, *store_, so);
    if (!started) {
      std::cerr << "layersec node: SecOC engine cannot start: ";
      switch (started.error()) {
        case secoc::StartError::kStateMissing:
          std::cerr << "state file " << s.state_file
                    << " is missing: a new trip counter would reuse freshness values under the same "
                       "keys. If this is the node's first provisioning (new keys), start it once with "
                       "--first-start";
          break;
        case secoc::StartError::kStateCorrupt:
          std::cerr << "state file " << s.state_file << " is corrupt (" << store_->last_error()
                    << "): restore it or provision new keys";
          break;
        case secoc::StartError::kStateStore:
          std::cerr << store_->last_error();
          break;
        case secoc::StartError::kTripExhausted:
          std::cerr << "the trip counter is exhausted: install a new key";
          break;
      }
      std::cerr << "\n";
      return kExitStart;
    }
    engine_ = std::move(started.value());
    std::cerr << "layersec node: SecOC trip counter " << engine_->trip() << " (state file "
              << s.state_file << ")\n";
    for (NodeKey& k : s.keys) {
      // Freshness clock: key rollover expiry runs on the engine's one clock.
      auto st = engine_->install_key(k.group, k.key_id, k.key, freshness_clock_.now());
      k.key.clear();  // the engine holds its own copy in its contexts
      if (!st.ok()) {
        std::cerr << "layersec node: key group '" << k.group_name << "' key id " << k.key_id
                  << ": " << secoc::to_string(st.error()) << "\n";
        return kExitStart;
      }
    }
    try {
      // Freshness (sync time bound, timestamp freshness of SD) runs on the
      // host's synchronised time, shared by every node (docs/node.md).
      runtime_->attach_secoc(*engine_, s.bindings, &freshness_clock_);
    } catch (const std::invalid_argument& e) {
      std::cerr << "layersec node: " << opts_.config << ": $.secoc: " << e.what() << "\n";
      return kExitConfig;
    }
    // Forgery probability of every PDU in use (never key material).
    std::cerr << engine_->config().describe();
    return 0;
  }

  void install_handlers() {
    runtime_->on_availability([this](std::uint16_t service, std::uint16_t instance, bool available) {
      printer_.emit({{"type", "availability"}, {"service", service}, {"instance", instance}, {"available", available}},
                    "service " + hex16(service) + "." + hex16(instance) + (available ? " available" : " unavailable"));
    });
    runtime_->on_rejection([this](const SecurityRejection& r) {
      ++test_.rejections;
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
      runtime_->on_event(c.service_id, Runtime::kAnyEvent, [this](const Notification& n) {
        ++test_.events_received;
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
      auto st = runtime_->set_method_handler(
          s.service, s.instance, s.method, [this, s](const Request& rq, Reply& reply) {
            ++test_.requests_served;
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

  void print_started() {
    json keys = json::array();
    if (cfg_.secoc)
      for (const NodeKey& k : cfg_.secoc->keys) keys.push_back({{"key_group", k.group_name}, {"key_id", k.key_id}});
    json services = json::array();
    for (const auto& s : cfg_.runtime.services)
      services.push_back({{"service", s.service_id}, {"instance", s.instance_id}, {"port", s.udp_port}});
    json clients = json::array();
    for (const auto& c : cfg_.runtime.clients) clients.push_back({{"service", c.service_id}, {"instance", c.instance_id}});
    json ignored = cfg_.ignored;
    printer_.emit({{"type", "started"},
                   {"name", cfg_.runtime.name},
                   {"unicast", cfg_.unicast.to_string()},
                   {"services", services},
                   {"clients", clients},
                   {"secoc", cfg_.secoc.has_value()},
                   {"keys", keys},
                   {"ignored", ignored}},
                  "node '" + cfg_.runtime.name + "' started on " + cfg_.unicast.to_string() + ": " +
                      std::to_string(services.size()) + " offered, " + std::to_string(clients.size()) +
                      " required" + (cfg_.secoc ? ", SecOC on" : ", SecOC off"));
    for (const auto& i : cfg_.ignored) std::cerr << "layersec node: ignoring vsomeip setting " << i << "\n";
  }

  void start_test_traffic() {
    for (std::size_t i = 0; i < cfg_.test.publish.size(); ++i) schedule_publish(i, clock_.now());
    for (std::size_t i = 0; i < cfg_.test.requests.size(); ++i) schedule_request(i, clock_.now());
  }

  bool is_field(std::uint16_t service, std::uint16_t instance, std::uint16_t event) const {
    for (const auto& s : cfg_.runtime.services)
      if (s.service_id == service && s.instance_id == instance)
        for (const auto& e : s.events)
          if (e.event_id == event) return e.is_field;
    return false;
  }

  // Timers are scheduled at fixed multiples of the interval from the first
  // one (no drift when a callback runs late).
  void schedule_publish(std::size_t i, TimePoint at) {
    loop_.add_timer(at, [this, i, at] {
      const TestPublish& p = cfg_.test.publish[i];
      PublishState& st = publish_state(i);
      if (p.count != 0 && st.sent >= p.count) return;
      st.payload.resize(p.payload_size);
      fill_sequenced(st.payload, st.sent + 1);
      auto r = is_field(p.service, p.instance, p.event)
                   ? runtime_->set_field(p.service, p.instance, p.event, st.payload)
                   : runtime_->notify(p.service, p.instance, p.event, st.payload);
      ++st.sent;
      if (r.ok()) {
        ++test_.published;
        st.failing = false;
      } else {
        ++test_.publish_failed;
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

  void schedule_request(std::size_t i, TimePoint at) {
    loop_.add_timer(at, [this, i, at] {
      const TestRequest& q = cfg_.test.requests[i];
      RequestState& st = request_state(i);
      if (q.count != 0 && st.sent >= q.count) return;
      if (!runtime_->available(q.service, q.instance)) {
        ++test_.requests_skipped_unavailable;
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
        auto r = runtime_->fire_and_forget(q.service, q.instance, q.method, st.payload);
        note_request(q, r.ok() ? std::nullopt : std::optional<RuntimeError>(r.error()));
      } else {
        const TimePoint sent_at = clock_.now();
        auto r = runtime_->request(
            q.service, q.instance, q.method, st.payload,
            [this, sent_at](const ResponseResult& res) { on_response(res, sent_at); }, q.timeout);
        note_request(q, r.ok() ? std::nullopt : std::optional<RuntimeError>(r.error()));
      }
      schedule_request(i, at + q.interval);
    });
  }

  void note_request(const TestRequest& q, std::optional<RuntimeError> err) {
    if (!err) {
      ++test_.requests_sent;
      return;
    }
    ++test_.requests_failed;
    printer_.emit({{"type", "error"}, {"op", "request"}, {"service", q.service}, {"method", q.method},
                   {"error", std::string(to_string(*err))}},
                  "request " + hex16(q.service) + " method " + hex16(q.method) + " failed: " +
                      std::string(to_string(*err)));
  }

  void on_response(const ResponseResult& r, TimePoint sent_at) {
    const double rtt_us = (clock_.now() - sent_at).us();
    std::string kind = "response";
    if (r.code == ReturnCode::kOk) {
      ++test_.responses_ok;
    } else if (r.code == ReturnCode::kTimeout) {
      ++test_.responses_timeout;
      kind = "timeout";
    } else {
      ++test_.responses_error;
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

  void print_final(int stop_signal) {
    const std::string stopped_by = stop_signal == SIGINT    ? "SIGINT"
                                   : stop_signal == SIGTERM ? "SIGTERM"
                                                            : "duration";
    json j{{"type", "counters"},
           {"stopped_by", stopped_by},
           {"runtime", someip::to_json(runtime_->counters())},
           {"test", test_json(test_)},
           {"transport",
            {{"rx_datagrams", transport_->stats().rx_datagrams},
             {"rx_truncated", transport_->stats().rx_truncated},
             {"rx_not_joined", transport_->stats().rx_not_joined},
             {"rx_errors", transport_->stats().rx_errors},
             {"tx_errors", transport_->stats().tx_errors}}}};
    if (engine_) j["secoc"] = engine_json(engine_->counters());
    const auto& c = runtime_->counters();
    std::string human = "stopped (" + stopped_by + "); counters: served " + std::to_string(c.requests_served) + ", responses " +
                        std::to_string(c.responses_received) + ", timeouts " + std::to_string(c.request_timeouts) +
                        ", notifications sent " + std::to_string(c.notifications_sent) + " received " +
                        std::to_string(c.notifications_received) + ", secoc protected " +
                        std::to_string(c.secoc_protected) + " verified " + std::to_string(c.secoc_verified) +
                        " rejected " + std::to_string(c.secoc_rejected) + ", transport errors " +
                        std::to_string(c.transport_errors);
    printer_.emit(j, human);
  }

  struct PublishState {
    std::uint64_t sent = 0;
    bool failing = false;
    std::vector<std::uint8_t> payload;
  };
  struct RequestState {
    std::uint64_t sent = 0;
    std::vector<std::uint8_t> payload;
  };
  PublishState& publish_state(std::size_t i) {
    if (publish_.size() < cfg_.test.publish.size()) publish_.resize(cfg_.test.publish.size());
    return publish_[i];
  }
  RequestState& request_state(std::size_t i) {
    if (requests_.size() < cfg_.test.requests.size()) requests_.resize(cfg_.test.requests.size());
    return requests_[i];
  }

  NodeConfig cfg_;
  NodeOptions opts_;
  MonotonicClock clock_;
  RealtimeClock freshness_clock_;
  net::EventLoop loop_;
  Printer printer_;
  TestCounters test_;
  std::vector<PublishState> publish_;
  std::vector<RequestState> requests_;
  std::unique_ptr<SocketTransport> transport_;
  std::unique_ptr<SeededRandom> random_;
  std::unique_ptr<secoc::FileStateStore> store_;
  std::unique_ptr<secoc::Engine> engine_;
  std::unique_ptr<Runtime> runtime_;  // last: destroyed first
};

void run_node(const NodeOptions& opts) {
  NodeConfig cfg;
  try {
    cfg = load_node_config(opts.config);
  } catch (const NodeConfigError& e) {
    std::cerr << "layersec node: " << (e.path().rfind('$', 0) == 0 ? opts.config + ": " : std::string())
              << e.what() << "\n";
    set_exit_code(kExitConfig);
    return;
  }
  try {
    Node node(std::move(cfg), opts);
    set_exit_code(node.run());
  } catch (const std::exception& e) {
    std::cerr << "layersec node: " << e.what() << "\n";
    set_exit_code(kExitStart);
  }
}

const CommandRegistration reg(60, [](CLI::App& root) {
  auto opts = std::make_shared<NodeOptions>();
  auto* cmd = root.add_subcommand(
      "node", "run a SOME/IP node (SD, methods, events, optional SecOC) from a JSON config (docs/node.md)");
  cmd->add_option("--config", opts->config, "node configuration (JSON, vsomeip-like)")->required();
  // Finite and at most ~31 years: "nan" used to pass NonNegativeNumber and
  // run forever; duration_s * 1e9 ns must fit the int64 deadline.
  cmd->add_option("--duration", opts->duration_s, "stop after SEC seconds (default: run until SIGINT/SIGTERM)")
      ->check(finite_in(0, 1e9));
  cmd->add_flag("--json", opts->json, "one JSON object per line on stdout");
  cmd->add_flag("--first-start", opts->first_start,
                "SecOC first provisioning: create the state file if it is missing (without it a "
                "missing state file is an error: a restarted trip counter would reuse freshness values)");
  auto seed = std::make_shared<std::uint64_t>(0);
  cmd->add_option("--seed", *seed, "seed of the SD random delays (default: random)")
      ->check(whole_in(0, ~std::uint64_t{0}));
  cmd->callback([opts, seed, cmd] {
    NodeOptions o = *opts;
    if (cmd->count("--seed") > 0) o.seed = *seed;
    run_node(o);
  });
});

}  // namespace
}  // namespace layersec::app
