// The node builder: one description of a node (StackSpec) in, every part of
// its protocol stack out (Stack), built in one place for every caller:
// `layersec node` (node/runner.h, UDP sockets), the simulated testbed
// (harness/testbed.h, SimTransport over a net::SimHost) and the netns
// scenario node (harness/netns_node.h, UDP sockets or AF_PACKET).
//
//   StackSpec                     Stack (owns, built in this order)
//   ---------                     ---------------------------------
//   macsec   (optional)    ->     macsec::MacsecLink over one SecY: Tx SA at
//                                 AN 0, one Rx SC and SA per peer
//   transport (one of)     ->     SocketTransport | RawTransport (through a
//                                 macsec::MacsecFilter when there is a SecY;
//                                 with `tsn`, a tsn::FirstHopStage before the
//                                 filter: classify, tag, shape, then protect) |
//                                 SimTransport
//   runtime, seed          ->     someip::SeededRandom + someip::Runtime
//   secoc    (optional)    ->     state store (file or memory), secoc::Engine
//                                 (started: trip counter persisted), keys
//                                 installed, bindings attached on the
//                                 freshness clock
//
// What stays with the caller: the event loop or simulator and the SimHost the
// transport runs on (not owned; they must outlive the Stack), interface
// set-up (addresses, TAP devices: the SecY is there for a TapLink or a
// simulator shim to use), freshness provisioning, key management, handlers,
// and Runtime::start(). Nothing is started and no datagram is sent here.
//
// Failures: a refused part throws BuildError naming the stage, so each caller
// keeps its own wording and exit status; an invalid secoc::EngineConfig
// throws the engine's secoc::ConfigError unchanged. Key bytes never appear in
// a message; the spec's keys are wiped once installed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/macsec/secy.h"
#include "layersec/net/frame.h"
#include "layersec/secoc/config.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/raw_transport.h"
#include "layersec/someip/runtime.h"
#include "layersec/tsn/first_hop_stage.h"

namespace layersec::net {
class EventLoop;
class SimHost;
class Simulator;
}  // namespace layersec::net
namespace layersec::macsec {
class MacsecFilter;
class MacsecLink;
}  // namespace layersec::macsec
namespace layersec::secoc {
class StateStore;
}  // namespace layersec::secoc
namespace layersec::someip {
class SimTransport;
class SocketTransport;
}  // namespace layersec::someip

namespace layersec::node {

// --- what to build ------------------------------------------------------------------

// One MACsec SecY (GCM-AES-128 unless `suite` says otherwise, confidentiality
// on, validateFrames strict, replay protection on: SecYConfig's defaults): a
// Tx SA at AN 0 under `tx_key`, and for each peer an Rx SC with an Rx SA at
// AN 0 under its key; at PN 1 for fresh keys, after the stored PNs with a
// PN store.
struct MacsecSpec {
  struct Peer {
    macsec::Sci sci;
    SecretBytes rx_key;  // the SAK this peer transmits under
    std::string name;    // for messages ("Rx SC of NAME")
  };
  macsec::Sci sci;  // the Tx SC
  macsec::CipherSuite suite = macsec::CipherSuite::kGcmAes128;
  SecretBytes tx_key;
  std::vector<Peer> peers;
  // PN persistence. A SAK that outlives one build (a key file, a provisioned
  // static key) needs `pn_store` (not owned, outlives the stack): it is
  // attached before the SAs are installed, every SA resumes after its record
  // and saves ahead of use (macsec/pn_state.h), so a rebuilt node never
  // reuses a PN (a GCM nonce) or accepts a recorded frame. No record is
  // refused (kPnStateMissing) unless `new_key` says this is the key's first
  // start. Without a store the spec must set `fresh_key`: the caller made
  // these SAKs for this build only (the simulated testbed's and the attack
  // harness's hop keys, a netns run's key file). Neither: make_secy refuses
  // the spec (BuildError kMacsec) rather than start a static SAK at PN 1.
  macsec::PnStore* pn_store = nullptr;
  std::uint64_t pn_reserve_block = 1024;
  bool new_key = false;
  bool fresh_key = false;
  // Where a VLAN tag goes (a TSN first hop tags frames): kClearTag keeps it in
  // front of the SecTAG, readable by bridges; covered by the ICV or not.
  macsec::VlanMode vlan_mode = macsec::VlanMode::kStandard;
  bool clear_tags_in_icv = false;
};

// UDP sockets on `loop` (someip::SocketTransport).
struct SocketTransportSpec {
  net::EventLoop* loop = nullptr;  // not owned
  net::Ipv4Address address;
  std::string device;  // SO_BINDTODEVICE when set
};
// Ethernet/IPv4/UDP framed by the node over AF_PACKET (someip::RawTransport);
// through a MacsecFilter when the spec has a SecY.
// With `tsn`: a tsn::FirstHopStage on `loop` and `tsn_clock` (not owned,
// required then) between the node's framing and the filter; its guard band
// counts the SecY's expansion when there is one.
struct RawTransportSpec {
  net::EventLoop* loop = nullptr;  // not owned
  someip::RawTransportConfig config;
  std::optional<tsn::FirstHopSettings> tsn{};
  const tsn::Clock* tsn_clock = nullptr;
};
// The simulated segment: `host`'s ports and the simulator's clock.
struct SimTransportSpec {
  net::Simulator* sim = nullptr;  // not owned
  net::SimHost* host = nullptr;   // not owned
};
using TransportSpec = std::variant<SocketTransportSpec, RawTransportSpec, SimTransportSpec>;

// One key to install: key id `key_id` as the current key of key group
// `group` (index into EngineConfig::key_groups).
struct KeySpec {
  std::uint32_t group = 0;
  std::uint32_t key_id = 1;
  SecretBytes key;  // wiped by build_stack once installed (or refused)
};

struct SecocSpec {
  secoc::EngineConfig engine;
  someip::SecocBindings bindings;
  // secoc::FileStateStore at this path (trip counter and sync floors
  // persisted); "" = secoc::MemoryStateStore (state lives as long as the Stack).
  std::string state_file;
  bool first_start = false;  // StartOptions::first_start: create a missing state
  std::vector<KeySpec> keys;  // installed in order; more may follow (Stack::install_key)
  // The synchronised freshness clock (sync time bound, timestamp freshness),
  // not owned. When given, the engine's start time and every key
  // installation read it, and the runtime runs freshness on it. nullptr: the
  // transport's clock, and the engine's start time is set by its first poll.
  const Clock* freshness_clock = nullptr;
  // Called once the engine has started (its trip counter persisted), before
  // the keys are installed and the bindings attached; `layersec node` prints
  // the trip counter here. Optional.
  std::function<void(const secoc::Engine&)> on_started;
};

struct StackSpec {
  someip::RuntimeConfig runtime;
  std::uint64_t seed = 1;  // someip::SeededRandom (SD random delays)
  TransportSpec transport;
  std::optional<MacsecSpec> macsec;
  // Or a SecY the caller built (`layersec node` from a `macsec up --config`
  // file, with its PN store); not together with `macsec`.
  std::optional<macsec::SecY> secy{};
  std::optional<SecocSpec> secoc;
};

// --- failures ------------------------------------------------------------------

enum class BuildStage : std::uint8_t {
  kMacsec,         // the SecY refused an SA or SC
  kTransport,      // the raw socket did not open
  kRuntime,        // the runtime refused its configuration
  kSecocStart,     // secoc::Engine::start failed (state missing, corrupt, unwritable; trip exhausted)
  kSecocKey,       // install_key refused a key of the spec
  kSecocBindings,  // attach_secoc refused the bindings
};

// What failed, with the part's own error code where it has one.
struct BuildFailure {
  BuildStage stage = BuildStage::kRuntime;
  std::optional<macsec::SaError> macsec_error;           // kMacsec
  std::optional<someip::TransportError> transport_error;  // kTransport
  int os_errno = 0;                                       // kTransport
  std::optional<secoc::StartError> start_error;           // kSecocStart
  std::string store_error;                                // kSecocStart: FileStateStore::last_error()
  std::size_t key_index = 0;                              // kSecocKey: index into SecocSpec::keys
  std::optional<secoc::KeyError> key_error;               // kSecocKey
};

// A part refused by build_stack. what() is a readable message (for kRuntime
// and kSecocBindings the part's own message, for kMacsec "MACsec <what>:
// <error>"); callers that print their own wording use failure().
class BuildError : public std::runtime_error {
 public:
  BuildError(BuildFailure failure, const std::string& what)
      : std::runtime_error(what), failure_(std::move(failure)) {}
  [[nodiscard]] BuildStage stage() const { return failure_.stage; }
  [[nodiscard]] const BuildFailure& failure() const { return failure_; }

 private:
  BuildFailure failure_;
};

// --- what was built ------------------------------------------------------------------

// Every part of one node, destroyed in reverse order of construction (the
// runtime first, the SecY last). Single-threaded like its parts.
class Stack {
 public:
  ~Stack();
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  [[nodiscard]] someip::Runtime& runtime() { return *runtime_; }
  [[nodiscard]] const someip::Runtime& runtime() const { return *runtime_; }
  [[nodiscard]] someip::Transport& transport() { return *transport_; }
  // The transport as built (exactly one is non-null).
  [[nodiscard]] someip::SocketTransport* socket_transport() { return socket_.get(); }
  [[nodiscard]] someip::RawTransport* raw_transport() { return raw_.get(); }
  [[nodiscard]] someip::SimTransport* sim_transport() { return sim_.get(); }
  // The raw transport's TSN first hop; nullptr without one.
  [[nodiscard]] const tsn::FirstHopStage* first_hop() const { return stage_.get(); }
  // nullptr without a "secoc" part.
  [[nodiscard]] secoc::Engine* engine() { return engine_.get(); }
  [[nodiscard]] const secoc::Engine* engine() const { return engine_.get(); }
  // nullptr without a "macsec" part.
  [[nodiscard]] macsec::MacsecLink* macsec_link() { return macsec_.get(); }
  [[nodiscard]] const macsec::MacsecLink* macsec_link() const { return macsec_.get(); }
  // Installs a key established after the build (Mode B, provisioning), at
  // the freshness clock's now. Requires an engine (std::logic_error otherwise).
  [[nodiscard]] Status<secoc::KeyError> install_key(std::uint32_t group, std::uint32_t key_id,
                                                    const SecretBytes& key);

 private:
  friend std::unique_ptr<Stack> build_stack(StackSpec spec);
  Stack() = default;
  [[nodiscard]] TimePoint freshness_now() const;

  std::unique_ptr<macsec::MacsecLink> macsec_;
  std::unique_ptr<macsec::MacsecFilter> filter_;
  std::unique_ptr<tsn::FirstHopStage> stage_;  // before raw_: outlives it
  std::unique_ptr<someip::SocketTransport> socket_;
  std::unique_ptr<someip::RawTransport> raw_;
  std::unique_ptr<someip::SimTransport> sim_;
  someip::Transport* transport_ = nullptr;
  std::unique_ptr<someip::SeededRandom> random_;
  std::unique_ptr<secoc::StateStore> store_;
  std::unique_ptr<secoc::Engine> engine_;
  const Clock* freshness_clock_ = nullptr;
  std::unique_ptr<someip::Runtime> runtime_;  // last: destroyed first
};

// Builds every part of `spec` (see the top of this file). Throws BuildError
// (or secoc::ConfigError for an invalid engine configuration); nothing built
// so far survives a failure.
[[nodiscard]] std::unique_ptr<Stack> build_stack(StackSpec spec);

// The SecY of `spec` on its own (the builder's, and the simulated switch
// ports' in the testbed). Throws BuildError(kMacsec).
[[nodiscard]] macsec::SecY make_secy(const MacsecSpec& spec);

// One hop of hop-by-hop MACsec (GCM-AES-128, confidentiality, strict
// validation), as the testbed's hybrid scenarios and the attack harness wire
// them: a SecY at `self` sending under `tx_key` to `peer`, which sends under
// `rx_key` (both copied; `peer_name` names the peer in messages).
[[nodiscard]] MacsecSpec hop_macsec_spec(macsec::Sci self, macsec::Sci peer, const SecretBytes& tx_key,
                                         const SecretBytes& rx_key, std::string peer_name);

}  // namespace layersec::node
