// MACsec link adapters: bind a sans-I/O SecY (secy.h) to something that
// carries frames, without adding any MACsec logic of their own.
//
//   MacsecLink        the adapter core: plain frame -> protect -> secure frame,
//                     secure frame -> validate -> plain frame, with link
//                     counters beside the SecY's 802.1AE MIB counters and a
//                     JSON rendering of both. Only frames whose ICV verified
//                     (Received::verified()) are delivered: anything else
//                     received on the lower link (not EtherType 88-E5,
//                     unverified in validateFrames Check/Disabled, unknown
//                     SCI, ...) is dropped and counted. There is no fallback
//                     to clear delivery.
//   TapLink           the user-space equivalent of the kernel's `macsec0` on
//                     `eth0`: a TAP interface (controlled port) plus an
//                     AF_PACKET socket on the lower interface (uncontrolled
//                     port), driven by a net::EventLoop.
//   make_sim_shim     endpoint-side SecY on the simulated segment
//                     (net::FrameShim between a SimHost and its port).
//   MacsecPortProcessor  switch-side SecY per port of the simulated segment
//                     (hop-by-hop MACsec, net::PortProcessor).
//
// Frame path per direction (802.1AE-2018 10.5/10.6 are in the SecY):
//   TAP read -> [offload: split/checksum, net/offload.h] -> SecY::protect
//            -> AF_PACKET send  (EtherType 0x88E5)
//   AF_PACKET receive -> SecY::validate (in place) -> verified?
//            -> [offload: join TCP segments] -> TAP write
// Buffers are allocated once; nothing on the frame path allocates.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/macsec/link_tsn.h"
#include "layersec/macsec/secy.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/frame.h"
#include "layersec/net/link_filter.h"
#include "layersec/net/packet_socket.h"
#include "layersec/net/sim.h"
#include "layersec/net/tap.h"
#include "layersec/tsn/pass_through.h"

namespace layersec::net {
class TcpCoalescer;  // net/offload.h
}  // namespace layersec::net

namespace layersec::macsec {

// SecTAG with SCI (16) + ICV (16): what a secure frame adds to a plain one,
// and therefore how much smaller the MACsec interface's MTU is than its link's.
inline constexpr int kMacsecOverhead = 32;

// Link counters (the SecY keeps the 802.1AE MIB counters).
struct LinkStats {
  // controlled port -> lower link
  std::uint64_t tx_frames = 0;          // plain frames taken from the controlled port
  std::uint64_t tx_sent = 0;            // secure frames handed to the lower link
  std::uint64_t tx_protect_errors = 0;  // SecY::protect refused (no SA, PN exhausted, too long, ...)
  std::uint64_t tx_send_errors = 0;     // the lower link refused the secure frame
  std::uint64_t tx_offload_errors = 0;  // a TAP frame whose offload could not be completed (net/offload.h): dropped
  std::array<std::uint64_t, net::kOffloadErrorCount> tx_offload_refused{};  // the same per net::OffloadError
  std::uint64_t tx_gso_reads = 0;       // TAP reads that carried a TCP segment split into several frames
  std::uint64_t tx_gso_segments = 0;    // the frames those reads were split into (also in tx_frames)
  // lower link -> controlled port
  std::uint64_t rx_frames = 0;          // frames received on the lower link (for us)
  std::uint64_t rx_not_for_us = 0;      // unicast to another MAC (promiscuous lower link): ignored
  std::uint64_t rx_not_macsec = 0;      // no SecTAG (EtherType not 88-E5): dropped
  std::uint64_t rx_control = 0;         // a control EtherType another socket handles (TapLinkOptions): skipped
  std::uint64_t rx_dropped = 0;         // discarded by the SecY (bad tag, not valid, late, no SCI/SA)
  std::uint64_t rx_unverified = 0;      // delivered by the SecY without a verified ICV: dropped here
  std::uint64_t rx_delivered = 0;       // verified plain frames handed to the controlled port
  std::uint64_t rx_deliver_errors = 0;  // the controlled port refused the frame
  std::uint64_t rx_gro_writes = 0;      // TAP writes that carried several verified TCP segments joined
  std::uint64_t rx_gro_segments = 0;    // the segments those writes carried (also in rx_delivered)
  std::uint64_t rx_ring_drops = 0;      // frames the kernel dropped because every lower receive ring slot was in use
  std::uint64_t io_errors = 0;          // read/receive failures other than "nothing waiting"

  bool operator==(const LinkStats&) const = default;
};

class MacsecLink {
 public:
  // Largest plain frame accepted (TAP frames never exceed MTU + headers).
  static constexpr std::size_t kMaxFrame = 65535;

  explicit MacsecLink(SecY secy);

  [[nodiscard]] SecY& secy() { return secy_; }
  [[nodiscard]] const SecY& secy() const { return secy_; }
  [[nodiscard]] const LinkStats& stats() const { return stats_; }

  // Controlled port -> lower link: protects `plain` with the encoding SA.
  // Returns the secure frame (a view into this object's buffer, valid until
  // the next call) or nullopt when the SecY refused (counted).
  std::optional<ByteSpan> protect(ByteSpan plain);
  // protect() with the SecY's reason when it refused (counted the same way):
  // for callers that count refusals by reason (link_ptp.h: no SA yet).
  [[nodiscard]] Result<ByteSpan, ProtectError> protect_checked(ByteSpan plain);
  // The same into `out` (a batch slot); returns the secure frame's length.
  std::optional<std::size_t> protect_into(ByteSpan plain, MutableByteSpan out);
  // Lower link -> controlled port: validates `wire` in place and returns the
  // verified plain frame (a view into `wire`), or nullopt when the frame must
  // not be delivered (counted; see the file comment).
  std::optional<ByteSpan> validate(MutableByteSpan wire);

  // Called by the adapters when the lower link / controlled port refused a frame.
  void count_send(bool ok) { ok ? ++stats_.tx_sent : ++stats_.tx_send_errors; }
  void count_sent(std::size_t sent, std::size_t failed) {
    stats_.tx_sent += sent;
    stats_.tx_send_errors += failed;
  }
  void count_deliver(bool ok) { ok ? ++stats_.rx_delivered : ++stats_.rx_deliver_errors; }
  // `frames` verified frames handed to the controlled port in one write.
  void count_deliver(std::size_t frames, bool ok) {
    (ok ? stats_.rx_delivered : stats_.rx_deliver_errors) += frames;
  }
  void count_gso(std::size_t segments) {
    ++stats_.tx_gso_reads;
    stats_.tx_gso_segments += segments;
  }
  void count_gro(std::size_t segments) {
    ++stats_.rx_gro_writes;
    stats_.rx_gro_segments += segments;
  }
  void count_not_for_us() { ++stats_.rx_not_for_us; }
  void count_ring_drops(std::uint64_t frames) { stats_.rx_ring_drops += frames; }
  void count_control() { ++stats_.rx_control; }
  void count_io_error() { ++stats_.io_errors; }
  void count_offload_error(net::OffloadError e) {
    ++stats_.tx_offload_errors;
    ++stats_.tx_offload_refused.at(static_cast<std::size_t>(e));
  }

  // {"secy": {802.1AE MIB counters}, "link": {link counters},
  //  "tx_sa": {"encoding_an", "next_pn", "exhausted", "new_sa_needed"},
  //  "tx_sc": {...}, "rx_scs": [...]}  (per_sc_json below)
  [[nodiscard]] nlohmann::json stats_json() const;

 private:
  SecY secy_;
  LinkStats stats_;
  std::vector<std::uint8_t> out_;
};

// The link counters as a JSON object (names as in LinkStats).
nlohmann::json to_json(const LinkStats& s);
// The SecY counters as a JSON object (802.1AE MIB names).
nlohmann::json to_json(const SecYStats& s);
// The per-SC and per-SA tables (secyTxSCStats/TxSAStats/RxSCStats/RxSAStats):
//   {"tx_sc": {"sci", OutPkts*/OutOctets*, "sas": [{"an", "encoding", "next_pn",
//              "exhausted", OutPktsProtected, OutPktsEncrypted}]},
//    "rx_scs": [{"sci", InPkts*/InOctets*, "sas": [{"an", "enabled", "next_pn",
//               "lowest_pn", InPktsOK, InPktsInvalid, InPktsNotValid,
//               InPktsNotUsingSA, InPktsUnusedSA}]}]}
// SCIs as 16 lower-case hex digits; only installed SAs are listed. With a
// PnStore every SA also carries "pn_persisted" (the persisted highest PN).
nlohmann::json per_sc_json(const SecY& secy);

// Sees the lower link's frames before and after the SecY, with their kernel
// RX timestamps (CLOCK_REALTIME ns, 0: none): the gPTP port of `macsec up
// --ptp` (link_ptp.h). Each returns true when it took the frame (dropped or
// consumed it, counted on its side); the link then does nothing more with it.
class LowerFrameHook {
 public:
  virtual ~LowerFrameHook() = default;
  // A frame as received on the lower link, before the SecY.
  virtual bool on_lower(ByteSpan wire, std::int64_t rx_realtime_ns) = 0;
  // A plain frame the SecY verified, before the TSN path and the TAP.
  virtual bool on_verified(ByteSpan plain, std::int64_t rx_realtime_ns) = 0;
  // The EtherTypes besides 0x88E5 on_lower must see whole (the lower
  // socket's kernel filter hands only the header of any other frame up).
  [[nodiscard]] virtual std::vector<std::uint16_t> lower_ether_types() const = 0;
};

struct TapLinkOptions {
  std::string lower;                  // lower interface (e.g. a veth end, eth0)
  std::string name;                   // TAP interface to create (e.g. "macsec0")
  std::optional<net::MacAddress> mac{};  // default: the lower interface's MAC
  bool bring_up = true;
  // Octets the link adds beyond the SecTAG and ICV (4 when a TSN first hop
  // inserts a C-tag): the TAP's MTU is that much smaller too.
  int extra_overhead = 0;
  // Untagged frames of these EtherTypes are a control protocol with its own
  // socket on the lower interface (EAPOL-MKA 0x888E with `--mka`): counted
  // rx_control and not handed to the SecY (whose MIB would count them NoTag).
  std::vector<std::uint16_t> control_ether_types{};
  // The TAP with IFF_VNET_HDR and TUNSETOFFLOAD (CSUM, TSO4, TSO6): the
  // kernel hands over TCP segments up to 64 KiB, split here; verified TCP
  // segments are joined again before the TAP (net/offload.h). false: a
  // plain TAP, one read and one write per frame (`macsec up --no-offload`).
  bool offload = true;
  // The lower socket with a PACKET_MMAP receive ring (TPACKET_V2,
  // net::PacketSocket::enable_rx_ring, kRxRingFrames slots): received frames
  // are read and validated in the ring slots without a system call per
  // batch (`macsec up --rx-ring`). Off by default: not measurably faster
  // than recvmmsg on the test machine (docs/macsec_link.md). false, or a
  // kernel that refuses the ring: recvmmsg batches.
  bool rx_ring = false;
  // One of several workers (`macsec up --workers N`): the TAP opened with
  // IFF_MULTI_QUEUE (each worker's TapLink::open with the same name adds a
  // queue; bring_up only on the last one), and the lower socket joined to
  // PACKET_FANOUT group `fanout_group` (> 0) in mode `fanout`.
  bool multi_queue = false;
  std::uint16_t fanout_group = 0;
  net::PacketSocket::Fanout fanout = net::PacketSocket::Fanout::kCpu;
};

// A TAP interface protected by a SecY over an AF_PACKET socket on the lower
// interface. Creation needs CAP_NET_ADMIN and CAP_NET_RAW and runs in the
// calling thread's network namespace. The TAP disappears when this object is
// destroyed.
class TapLink {
 public:
  // Creates the TAP (MTU = lower MTU - 32, and at most max_frame_size - 46
  // when the SecY has one; MAC as configured or the lower's),
  // opens the lower socket for every EtherType and puts it in promiscuous
  // mode when the TAP MAC differs from the lower MAC, then brings the TAP up.
  // The lower socket carries a kernel filter (attach_lower_filter): only
  // MACsec frames (and gPTP with set_frame_hook) to the TAP's MAC or a
  // group address reach user space whole; of any other frame only its
  // first 22 octets do, enough to count it where it always was.
  // Throws std::runtime_error (start-up) with the failing step and errno text.
  static TapLink open(MacsecLink& link, const TapLinkOptions& options);
  TapLink(TapLink&&) noexcept;
  ~TapLink();

  [[nodiscard]] const std::string& name() const { return tap_.name(); }
  [[nodiscard]] const std::string& lower() const { return lower_name_; }
  [[nodiscard]] const net::MacAddress& mac() const { return mac_; }
  [[nodiscard]] int mtu() const { return mtu_; }
  [[nodiscard]] int lower_mtu() const { return lower_mtu_; }
  // The TAP hands over TCP segments up to 64 KiB and partial checksums
  // (IFF_VNET_HDR + TUNSETOFFLOAD, set by open() before the TAP is up); the
  // link finishes them (net/offload.h) into MTU-sized frames, each then
  // going the way of any TAP frame (the --tsn path, or protected with its
  // own PN, in order, into the batch). Without --tsn, verified TCP segments
  // from the lower link are joined (TcpCoalescer) and written as one GSO
  // frame; the join never outlives one pump_lower call.
  [[nodiscard]] bool tcp_offload() const { return tcp_offload_; }
  // The lower socket reads through its receive ring (TapLinkOptions::rx_ring).
  [[nodiscard]] bool rx_ring() const { return lower_.rx_ring(); }

  // TSN first hop (link_tsn.h, tsn/shaper_driver.h): frames from the TAP are
  // classified and tagged, protected, and queued in a time-aware shaper on
  // `clock` that sends them on the lower socket when their gate and the
  // emulated port speed allow; verified frames have their first-hop tag
  // checked and popped before the TAP. Call before attach(); `clock` is not
  // owned and must outlive the link. Without attach() (tests) frames are
  // sent at once, unshaped.
  void enable_tsn(const LinkTsnConfig& config, const tsn::Clock& clock);
  [[nodiscard]] const TsnFramePath* tsn() const { return tsn_.get(); }
  [[nodiscard]] const tsn::ShaperDriver* shaper() const { return shaper_.get(); }
  // {"config": describe(), "path": TsnLinkStats, "shaper": shaper_json} or null.
  [[nodiscard]] nlohmann::json tsn_json() const;
  // Times the frames of `traffic_class` through the TSN path on the
  // shaper's clock (tsn/pass_through.h: TAP -> shaper, the model's start ->
  // lower send returned, lower -> TAP by the tag's PCP), for `bench tsn`'s
  // measured processing term. Call after enable_tsn(); read after detach().
  void time_tsn_class(int traffic_class);
  [[nodiscard]] const tsn::PassThroughTimes* tsn_times() const { return tsn_times_.get(); }

  // The shaper's clock was stepped (a gPTP servo's phase step): its model
  // restarts at the new time (tsn::ShaperDriver::clock_stepped). No-op
  // without a running shaper.
  void clock_stepped();

  // Hands every lower-link frame to `hook` first (and every verified one
  // before the TAP), and turns on software RX timestamps on the lower
  // socket. `hook` is not owned; nullptr removes it. Throws
  // std::runtime_error when the timestamps cannot be enabled.
  void set_frame_hook(LowerFrameHook* hook);

  // Watches both descriptors on `loop`; unwatch with detach(). The link must
  // not move while attached (the callbacks hold `this`).
  void attach(net::EventLoop& loop);
  void detach(net::EventLoop& loop);
  // Moves up to `budget` frames TAP -> lower / lower -> TAP; returns how many
  // were read. Called by the loop; public for tests. Without TSN, pump_tap
  // protects the frames it reads into a batch and sends it (sendmmsg) when
  // it is full and before it returns, so PNs follow the wire order and no
  // frame waits beyond the call; pump_lower receives up to kBatch frames per
  // system call (recvmmsg) and handles each as before, in order.
  std::size_t pump_tap(std::size_t budget = 64);
  std::size_t pump_lower(std::size_t budget = 64);

  // Frames per recvmmsg / sendmmsg (and per receive from the ring).
  static constexpr std::size_t kBatch = 32;
  // Receive ring slots: about the frames the 4 MiB receive buffer of the
  // recvmmsg path queues (one slot per frame, lower MTU + 64 octets each).
  static constexpr std::size_t kRxRingFrames = 1024;

 private:
  TapLink(MacsecLink& link, net::TapDevice tap, net::PacketSocket lower, std::size_t frame_capacity);
  MacsecLink* link_;
  net::TapDevice tap_;
  net::PacketSocket lower_;
  std::string lower_name_;
  net::MacAddress mac_;
  bool promiscuous_ = false;
  std::vector<std::uint16_t> control_ether_types_;
  int mtu_ = 0;
  int lower_mtu_ = 0;
  std::vector<std::uint8_t> buf_;
  net::PacketRxBatch rx_batch_;
  net::PacketTxBatch tx_batch_;
  // TSN first hop (enable_tsn); the shaper and its timer exist while attached.
  std::unique_ptr<TsnFramePath> tsn_;
  const tsn::Clock* tsn_clock_ = nullptr;
  std::unique_ptr<tsn::LoopShaperTimer> tsn_timer_;
  std::unique_ptr<tsn::ShaperDriver> shaper_;
  std::vector<std::uint8_t> tsn_buf_;
  std::unique_ptr<tsn::PassThroughTimes> tsn_times_;
  LowerFrameHook* hook_ = nullptr;
  // Sends one secure frame on the lower socket (counted).
  bool send_lower(ByteSpan secure);
  // (Re)attaches the lower socket's filter (net/socket_filter.h): whole
  // frames for 0x88E5 (and the frame hook's lower_ether_types) to the TAP's
  // MAC or a group address, the header of anything else (still counted).
  void attach_lower_filter();
  // Sends the pending batch (counted).
  void flush_tx();
  // One frame from the lower link: not-for-us, hook, control, SecY, TSN, TAP.
  void handle_lower(MutableByteSpan frame, std::int64_t rx_realtime_ns);
  // One finished plain frame from the TAP: TSN path, or protect into the batch.
  void tx_plain(ByteSpan plain);
  // One verified plain frame for the TAP: joined with the pending TCP
  // segments, or written after them.
  void deliver(ByteSpan plain);
  // Writes the pending joined segments (if any) to the TAP.
  void flush_gro();
  std::vector<std::uint8_t> segment_buf_;
  bool tcp_offload_ = false;
  std::unique_ptr<net::TcpCoalescer> gro_;  // with tcp_offload_, without TSN
};

// Endpoint-side SecY on the simulated segment:
//   auto shim = make_sim_shim(link);
//   port = seg.add_port(cfg, &shim); shim.connect(&seg.sender(port), &host); host.connect(&shim);
// Outbound frames are protected, inbound ones validated; only verified frames
// reach the host. `link` must outlive the shim.
net::FrameShim make_sim_shim(MacsecLink& link);

// Switch-side SecY per port of the simulated segment (hop-by-hop MACsec):
// frames arriving from a bound port's link are validated and stripped, frames
// leaving through it are protected with that port's SecY. Unbound ports pass
// frames unchanged. Links are not owned.
class MacsecPortProcessor final : public net::PortProcessor {
 public:
  void bind(net::PortId port, MacsecLink* link) { links_[port] = link; }
  bool on_ingress(net::PortId port, std::vector<std::uint8_t>& frame) override;
  bool on_egress(net::PortId port, std::vector<std::uint8_t>& frame) override;

 private:
  std::map<net::PortId, MacsecLink*> links_;
};

// A net::LinkFilter over a MacsecLink: the user-space SecY of a transport
// that frames its own packets (someip::RawTransport), with no TAP in between.
//   outbound = MacsecLink::protect (the secure frame is a view into the
//              link's buffer, valid until the next outbound call; counted
//              tx_sent on success, tx_protect_errors on refusal),
//   inbound  = MacsecLink::validate in place (only frames whose ICV verified
//              come back; everything else is dropped and counted by the
//              link and its SecY; no fallback to clear delivery),
//   overhead = kMacsecOverhead (SecTAG with SCI + ICV: the most protect adds),
//   wire EtherType 0x88E5 (802.1AE-2018 9.2).
// `link` is not owned and must outlive the filter. Single-threaded, like the
// link.
class MacsecFilter final : public net::LinkFilter {
 public:
  explicit MacsecFilter(MacsecLink& link) : link_(&link) {}

  std::optional<ByteSpan> outbound(ByteSpan plain) override;
  std::optional<ByteSpan> inbound(MutableByteSpan wire) override;
  [[nodiscard]] std::size_t overhead() const override { return static_cast<std::size_t>(kMacsecOverhead); }
  [[nodiscard]] std::uint16_t wire_ether_type() const override { return kMacsecEtherType; }

  [[nodiscard]] MacsecLink& link() { return *link_; }
  [[nodiscard]] const MacsecLink& link() const { return *link_; }

 private:
  MacsecLink* link_;
};

}  // namespace layersec::macsec
