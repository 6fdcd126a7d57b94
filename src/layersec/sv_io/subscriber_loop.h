// `sv subscribe`: receive, verify and supervise one stream on a real
// interface. SubscriberLoop drives the sans-I/O sv::Subscriber from a
// FrameSource (an AF_PACKET socket bound to every EtherType, so
// priority-tagged frames keep their tag; non-SV frames are counted and
// ignored) on a net::EventLoop: each frame goes through Subscriber::on_frame
// with its arrival time on the loop's clock, stream timeouts are polled, keys
// the KDC sends are installed as the stream's next key, and a report is
// printed every interval and at the end.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/time.h"
#include "layersec/net/event_loop.h"
#include "layersec/sv/kdc.h"
#include "layersec/sv/subscriber.h"
#include "layersec/sv_io/frame_port.h"
#include "layersec/sv_io/kdc_client.h"
#include "layersec/sv_io/keys.h"

namespace layersec::sv_io {

// EtherType 0x88BA, directly or behind one 802.1Q tag.
[[nodiscard]] bool is_sv_frame(ByteSpan frame);

struct SubscriberLoopOptions {
  std::string iface;         // named in the reports
  std::string profile_name;  // named in the start-up line (text mode)
  Duration duration = Duration::zero();  // zero: until a stop request
  Duration interval = Duration::seconds(1);
  bool json = false;
  std::uint32_t current_key_id = 0;  // the key the stream starts with (0: none)
  std::uint32_t key_id_shown = 1;    // the report's key_id when no KDC is used
};

class SubscriberLoop {
 public:
  // `sub` (holding stream `stream`), `kdc` (may be null) and `out` are not
  // owned. Rejections of keys from the KDC go to `log` (nullptr: std::cerr).
  SubscriberLoop(sv::Subscriber& sub, std::size_t stream, KdcClient* kdc, const SubscriberLoopOptions& options,
                 std::ostream& out, std::ostream* log = nullptr);

  // Installs a key newer than any seen as the stream's next key.
  void take_key(sv::kdc::GroupKeyUpdate update);

  // Prints the start-up line ({"type":"ready","iface"} with json: scripts
  // wait for it), receives from `source` (not owned) on `loop` until the
  // duration passed or a stop is requested, then prints the final report.
  void run(net::EventLoop& loop, FrameSource& source);

  // One report: {"type": "stats"|"final", iface, elapsed_s, streams: [{counters
  // (report_json.h), appid, svID, auth, [key_id], [floor_resume: the
  // persisted resume point with --state], timed_out}], rejections:
  // {reason: n}, malformed, unknown_appid, non_sv_frames, rx_errors,
  // truncated, socket_drops, [kdc_rejected]}; reads the source's kernel
  // drops first (during run()).
  nlohmann::json report(bool final, TimePoint now);

  [[nodiscard]] std::uint64_t non_sv_frames() const { return non_sv_; }
  [[nodiscard]] std::uint64_t drops(sv::DropReason r) const { return drops_[static_cast<std::size_t>(r)]; }

 private:
  void on_frames();
  void print(bool final, TimePoint now);

  sv::Subscriber* sub_;
  std::size_t stream_;
  KdcClient* kdc_;
  SubscriberLoopOptions options_;
  std::ostream* out_;
  std::ostream* log_;
  NewestKeyFilter keys_;
  FrameSource* source_ = nullptr;  // during run()
  net::EventLoop* loop_ = nullptr;  // during run()
  TimePoint start_;
  std::array<std::uint64_t, 16> drops_{};
  std::uint64_t non_sv_ = 0, rx_errors_ = 0, truncated_ = 0, socket_drops_ = 0;
  std::vector<std::uint8_t> buf_ = std::vector<std::uint8_t>(9216);
};

// Everything `sv subscribe` runs after its options are parsed.
struct SubscribeRun {
  std::string iface;
  std::string profile_name;
  sv::SubscriptionConfig subscription;  // timeout and security set
  std::optional<sv::KeyMaterial> key;
  std::optional<KdcClient> kdc;         // the keys came from the KDC
  std::optional<sv::kdc::GroupKeyUpdate> announced;  // the KDC's next key
  std::uint32_t key_id_shown = 1;
  Duration duration = Duration::zero();
  Duration interval = Duration::seconds(1);
  bool json = false;
  bool realtime = false;  // mlockall + SCHED_FIFO 70, best effort
  // The counter floor file (floor_file.h; empty: the floor lives as long as
  // the process). first_start creates it when missing; an existing file is
  // always resumed, never rewound.
  std::string state_path;
  bool first_start = false;
  std::uint64_t floor_reserve = 8192;  // frameCounters reserved per save (1..sv::kMaxFloorReserve)
};

// Adds the stream, opens the AF_PACKET socket on the interface (every
// EtherType, non-blocking, promiscuous, a 16 MiB receive queue: frames the
// kernel still drops are reported as socket_drops), enters real time when
// asked (a warning on stderr when refused), installs the stop handlers and
// runs a SubscriberLoop printing to `out`. With a state_path the floor file is
// opened (or, first_start and missing, created) and attached before the socket
// opens; at the end the exact floor is written (clean shutdown), a failure
// to write it is a warning (the reservation on disk stays in force). Throws
// std::runtime_error on start-up failures (a missing, corrupt, insecure or
// symlinked floor file among them, with the path and the reason).
void subscribe_on_interface(SubscribeRun run, std::ostream& out);

}  // namespace layersec::sv_io
