// One MKA participant (IEEE 802.1X-2020 clause 9 and §11.11): the member of
// one connectivity association (one CAK/CKN) on one port, sans-I/O.
//
// It owns its Member Identifier (96 random bits from the injected
// RandomSource) and Message Number (1, 2, ... never repeated under one MI),
// the table of live and potential peers (MI, last MN, SCI, key server
// priority, the peer's last SAK Use), the key server role (key_server.h)
// and the SAK lifecycle that programs the SecY (sak_lifecycle.h).
//
// An I/O loop drives it with four calls and a deadline:
//
//   start(now)              first MKPDU; hellos begin
//   on_mkpdu(frame, now)    a received EAPOL-MKA frame (DA .. ICV, no FCS, no VLAN tag)
//   on_timer(now)           when now >= next_deadline()
//   on_tx_pn(pn, now)       the SecY's next transmit PN (e.g. every second, or on
//                           macsec::SecY::new_sa_needed())
//   next_deadline()         the next time on_timer must run (TimePoint::max(): none)
//
// each returning an Output (output.h): MKPDUs to send, the SecY calls it made
// (in order), events, and the drop reason of a received frame. It reads no
// clock and does no I/O; the SecYDriver is called synchronously.
//
// Receive path (every step fails closed, counted by DropReason, the frame
// then leaves no trace but the counter): decode (codec) -> CKN is ours ->
// ICV verifies with the ICK -> not our own MI/SCI -> MN newer than the last
// one from that MI -> the peer lists and the SAK Use/Distributed SAK sets
// make sense (key server elected, KN known, SAK unwraps) -> act.
//
// Liveness (§9.4.3): a peer is potential once an MKPDU from it verified; it
// becomes live when it lists our MI with an MN we sent within the MKA Life
// Time, and stays live while such MKPDUs keep coming (it is dropped after
// life_time without one). A live peer whose SCI reappears under a new MI
// that becomes live (the peer restarted) is superseded at once.
//
// Timers: hello_time (2 s) between MKPDUs, with bounded_hellos MKPDUs at
// bounded_hello_time (0.5 s) after start and whenever the last live peer is
// lost, so bring-up is bounded; life_time (6 s); as key server the transmit
// delay and the SAK lifetime; the retire timer. An MKPDU also goes out at
// once when something a peer needs changed (a new peer, a new SAK, SAK use),
// at most max_immediate_mkpdus per hello period.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/mka/key_server.h"
#include "layersec/mka/mkpdu.h"
#include "layersec/mka/output.h"
#include "layersec/mka/sak_lifecycle.h"
#include "layersec/mka/secy_driver.h"

namespace layersec::mka {

struct ParticipantConfig {
  std::uint64_t sci = 0;               // our SCI: MAC (48 bits) || port; the MAC is the MKPDUs' source
  std::vector<std::uint8_t> ckn;       // CAK Name, 1..32 octets
  std::uint8_t key_server_priority = 0x10;  // lower wins; 255: never key server
  CipherSuite cipher_suite = CipherSuite::kGcmAes128;
  // What we distribute as key server (the SecY must be able to do it).
  ConfidentialityOffset confidentiality_offset = ConfidentialityOffset::kOffset0;
  MacsecCapability macsec_capability = MacsecCapability::kConfidentialityWithOffset;
  std::uint8_t mka_version = kMkaVersion;  // 1..3 (wpa_supplicant 2.10 sends 1 and accepts any)

  Duration hello_time = Duration::seconds(2);             // MKA Hello Time
  Duration bounded_hello_time = Duration::milliseconds(500);  // MKA Bounded Hello Time
  std::uint32_t bounded_hellos = 3;   // fast hellos after start and after losing every peer
  Duration life_time = Duration::seconds(6);              // MKA Life Time
  // Key server: transmit with a new SAK this long after distributing it even
  // if a live peer has not reported receiving it (802.1X transmitDelay).
  Duration transmit_delay = Duration::seconds(6);
  // The old SAK is retired this long after we switched to the new one
  // (retireDelay; hostap's MKA_SAK_RETIRE_TIME is 3 s) ...
  Duration retire_time = Duration::seconds(3);
  // ... or this long after every live peer reported transmitting with the
  // new one, whichever comes first (frames sent before the switch may still
  // be on their way).
  Duration retire_grace = Duration::milliseconds(250);
  Duration rekey_interval = Duration::zero();  // key server: SAK lifetime; zero: no timer rekey
  std::uint64_t pn_rekey_threshold = 0;        // 0: KeyServerConfig's default
  std::size_t max_peers = 64;                  // live + potential
  std::uint32_t max_immediate_mkpdus = 8;      // per hello period
};

enum class ParticipantState : std::uint8_t {
  kIdle,       // constructed or stopped: sends nothing, drops every MKPDU (kNotStarted)
  kSearching,  // started, no live peer: hellos (bounded ones first), peers may be potential
  kLive,       // at least one live peer: a key server may be elected and SAKs flow
};
std::string_view to_string(ParticipantState s);

// Counters (never reset). drops[r] per DropReason; malformed[e] per codec error.
struct ParticipantStats {
  std::uint64_t mkpdus_received = 0;
  std::uint64_t mkpdus_accepted = 0;
  std::uint64_t mkpdus_sent = 0;
  std::uint64_t immediate_mkpdus_sent = 0;
  std::uint64_t unknown_parameter_sets = 0;  // in accepted MKPDUs (skipped, §11.11.3)
  std::uint64_t peers_live = 0;              // potential -> live transitions
  std::uint64_t peers_lost = 0;
  std::uint64_t potential_peers_expired = 0;
  std::uint64_t saks_generated = 0;
  std::uint64_t saks_received = 0;           // distributed SAKs accepted
  std::uint64_t saks_installed = 0;
  std::uint64_t mi_changes = 0;
  std::uint64_t secy_errors = 0;
  std::uint64_t encode_failures = 0;         // an MKPDU we could not encode (not sent)
  std::uint64_t xpn_saks_deferred = 0;       // XPN Distributed SAK naming a member we do not know yet
  std::array<std::uint64_t, kDropReasonCount> drops{};
  std::array<std::uint64_t, kMkpduErrorCount> malformed{};
  std::array<std::uint64_t, kRekeyReasonCount> rekeys{};
  [[nodiscard]] std::uint64_t drop(DropReason r) const { return drops[static_cast<std::size_t>(r)]; }
  [[nodiscard]] std::uint64_t rekey(RekeyReason r) const { return rekeys[static_cast<std::size_t>(r)]; }
};

// A row of the peer table (observers, JSON reports).
struct PeerInfo {
  MemberId mi{};
  std::uint32_t mn = 0;
  std::uint64_t sci = 0;
  std::uint8_t key_server_priority = kNeverKeyServer;
  bool live = false;
  TimePoint expires{};
};

class Participant {
 public:
  // Derives the ICK and KEK from `cak` (16 or 32 octets) and the CKN and
  // draws our MI. Throws std::invalid_argument for a bad configuration (CAK
  // or CKN length, SAK length of the suite vs the CAK, zero timers, SCI 0)
  // and std::runtime_error if the random source fails. `secy` and `rng`
  // must outlive the participant.
  Participant(ParticipantConfig config, SecretBytes cak, SecYDriver& secy, RandomSource& rng);

  Output start(TimePoint now);
  Output on_mkpdu(ByteSpan frame, TimePoint now);
  Output on_timer(TimePoint now);
  Output on_tx_pn(std::uint64_t next_pn, TimePoint now);
  // The operator asks for a new SAK (RekeyReason::kOperator): only the
  // elected key server distributes SAKs, so anyone else gets nullopt and
  // nothing changes. Like every rekey it waits for a running one to finish.
  [[nodiscard]] std::optional<Output> rekey_now(TimePoint now);
  // Leaves the CA: every SA removed, peers forgotten, kIdle (start() again
  // begins with a new MI).
  Output stop(TimePoint now);
  [[nodiscard]] TimePoint next_deadline() const;

  [[nodiscard]] ParticipantState state() const { return state_; }
  [[nodiscard]] const ParticipantStats& stats() const { return stats_; }
  [[nodiscard]] const ParticipantConfig& config() const { return config_; }
  [[nodiscard]] const MemberId& mi() const { return mi_; }
  [[nodiscard]] std::uint32_t mn() const { return mn_; }
  [[nodiscard]] std::vector<PeerInfo> peers() const;
  [[nodiscard]] std::size_t live_peer_count() const;
  // The elected key server's SCI (ours when we are it).
  [[nodiscard]] std::optional<std::uint64_t> key_server_sci() const;
  [[nodiscard]] bool is_key_server() const { return key_server_.elected(); }
  [[nodiscard]] const KeyServer& key_server() const { return key_server_; }
  [[nodiscard]] const SakLifecycle& sak() const { return sak_; }
  // The MKPDU we would send now (without sending it: MN unchanged). Tests
  // and reports compare it with a peer's view.
  [[nodiscard]] Mkpdu preview_mkpdu() const;

 private:
  struct Peer {
    MemberId mi{};
    std::uint32_t mn = 0;
    std::uint64_t sci = 0;
    std::uint8_t priority = kNeverKeyServer;
    bool key_server_flag = false;
    bool live = false;
    TimePoint expires{};
    std::optional<SakUse> sak_use;
    std::optional<XpnParameterSet> xpn;
  };
  // A Distributed SAK that passed every check, waiting to be applied.
  struct AcceptedSak {
    SecretBytes sak;
    KeyIdentifier ki{};
    std::uint8_t an = 0;
    ConfidentialityOffset offset = ConfidentialityOffset::kOffset0;
    std::vector<std::uint64_t> member_scis;  // XPN: the key server's members (SSCI order)
  };
  struct Election {
    bool any = false;
    bool self = false;
    std::uint64_t sci = 0;
    MemberId mi{};
  };

  Output drop(Output out, DropReason r);
  void advance(TimePoint now, Output& out);
  void expire_peers(TimePoint now, Output& out);
  void lose_peer(std::size_t index, PeerLossReason why, TimePoint now, Output& out);
  void make_live(const MemberId& mi, TimePoint now, Output& out);
  // The election as it would be with `sender` (nullptr: none) sending
  // `basic` and being live or not.
  [[nodiscard]] Election elect(const MemberId* sender, const BasicParameterSet* basic, bool sender_live) const;
  void run_election(TimePoint now, Output& out);
  void step(TimePoint now, Output& out);
  bool step_once(TimePoint now, Output& out);
  bool start_rekey(TimePoint now, Output& out);
  [[nodiscard]] std::uint8_t choose_an() const;
  void apply_sak(AcceptedSak s, TimePoint now, Output& out);
  void note_peer_pns(const Peer& p);
  // Every live peer (only those in `only`, when given) receives (transmit
  // false) or transmits with `ki`; false when there is none.
  [[nodiscard]] bool all_live_peers(bool transmit, const KeyIdentifier& ki,
                                    const std::vector<MemberId>* only = nullptr) const;
  // XPN: the SCIs of the key server and of the MIs in its live list, if we
  // know every one of them and we are among them.
  [[nodiscard]] std::optional<std::vector<std::uint64_t>> xpn_members(const Mkpdu& m);
  // XPN key server: the members the SAK being distributed was made for.
  [[nodiscard]] const std::vector<MemberId>* xpn_distribution_members() const;
  [[nodiscard]] std::vector<std::uint64_t> live_scis() const;
  [[nodiscard]] bool sci_live(std::uint64_t sci) const;
  [[nodiscard]] bool mn_recent(std::uint32_t mn, TimePoint now) const;
  void new_mi(TimePoint now, Output& out);
  void send_mkpdu(TimePoint now, Output& out, bool immediate);
  [[nodiscard]] Mkpdu build_mkpdu(std::uint32_t mn) const;
  [[nodiscard]] std::uint64_t lowest_acceptable_pn(const InstalledSak* k) const;
  Peer* find_peer(const MemberId& mi);
  void update_state();

  ParticipantConfig config_;
  SecretBytes cak_;
  SecretBytes ick_;
  SecretBytes kek_;
  SecYDriver& secy_;
  RandomSource& rng_;
  KeyServer key_server_;
  SakLifecycle sak_;
  ParticipantStats stats_;
  ParticipantState state_ = ParticipantState::kIdle;

  MemberId mi_{};
  std::uint32_t mn_ = 0;  // the last MN sent (0: none yet)
  std::deque<std::pair<std::uint32_t, TimePoint>> sent_;  // (MN, when) within the life time
  std::vector<Peer> peers_;
  Election elected_;
  std::optional<KeyIdentifier> newest_received_;  // the newest KI accepted from a key server
  std::optional<AcceptedSak> held_sak_;           // arrived while transmitting: applied after retire
  std::optional<TimePoint> all_tx_since_;         // every live peer transmits with the latest SAK
  std::optional<KeyIdentifier> pn_reported_;      // on_tx_pn reached the threshold for this SAK
  std::deque<MemberId> superseded_;               // MIs replaced by a restart of their member (bounded)

  TimePoint next_hello_{};
  TimePoint deadline_floor_{};        // deadlines at or before it were handled already
  TimePoint rekey_blocked_until_{};   // after a failed rekey: retried with the next hello
  std::uint32_t bounded_left_ = 0;
  std::uint32_t immediate_left_ = 0;
  bool new_info_ = false;
};

}  // namespace layersec::mka
