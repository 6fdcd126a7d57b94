// F.disk-full (fault_disk.h).
//
// SecOC: the sender's trip counter is persisted before the first Secured
// I-PDU of every start (state_store.h), so a running sender's FVs are
// covered by the trip it persisted at start; a start that cannot persist its
// bump must be refused. The row starts a sender on the empty file system,
// fills it, sends half the attempts (their trip must be the persisted one),
// then tries, for every remaining attempt, to start the sender again and
// send: every start must be refused (secoc::StartError), and any FV sent
// with a trip above the one in the state file is accepted (a FINDING).
//
// MACsec: the SecY persists a block of PNs (1, 2, 4, ... up to the reserve
// block) in its PnStore before using them (secy.h). The row sends a few
// frames on the empty file system, fills it, then tries `attempts` frames:
// the SecY may use the PNs it reserved already and must then refuse
// (kPnNotPersisted). Afterwards the state file is read again; any frame sent
// with a PN above its record is accepted (a FINDING).
#include "layersec/attack/fault_disk.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/secret.h"
#include "layersec/harness/scenario_layout.h"
#include "layersec/macsec/pn_state_file.h"
#include "layersec/macsec/secy.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/state_store.h"

namespace layersec::attack {
namespace {

namespace L = harness::layout;

constexpr std::int64_t kEpochNs = 1'780'000'000LL * 1'000'000'000LL;
constexpr std::uint64_t kReserveBlock = 64;
constexpr int kFramesBeforeFull = 10;

// A small tmpfs on a fresh mkdtemp directory, unmounted and removed on
// destruction. `why` says what failed when !mounted.
class FullFs {
 public:
  FullFs() {
    char tmpl[] = "/tmp/layersec-diskfull-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      why = std::string("mkdtemp: ") + std::strerror(errno);
      return;
    }
    dir = tmpl;
    if (::geteuid() != 0) {
      why = "not root: cannot mount a tmpfs";
      return;
    }
    if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=0700") != 0) {
      why = std::string("mount tmpfs: ") + std::strerror(errno);
      return;
    }
    mounted = true;
  }
  ~FullFs() {
    if (mounted && ::umount2(dir.c_str(), 0) != 0) (void)::umount2(dir.c_str(), MNT_DETACH);
    if (!dir.empty()) (void)::rmdir(dir.c_str());
  }
  FullFs(const FullFs&) = delete;
  FullFs& operator=(const FullFs&) = delete;

  // Writes a filler file until the file system refuses (ENOSPC); returns
  // the octets written (0 on failure to create it).
  std::uint64_t fill() {
    const std::string path = dir + "/filler";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return 0;
    std::vector<char> block(4096, 0x5A);
    std::uint64_t total = 0;
    for (;;) {
      const ssize_t n = ::write(fd, block.data(), block.size());
      if (n <= 0) break;
      total += static_cast<std::uint64_t>(n);
    }
    (void)::close(fd);
    return total;
  }

  std::string dir;
  bool mounted = false;
  std::string why;
};

SecretBytes seeded_key(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  SecretBytes k(n);
  for (auto& b : k.mutable_span()) b = static_cast<std::uint8_t>(rng());
  return k;
}

const char* start_error_name(secoc::StartError e) {
  switch (e) {
    case secoc::StartError::kStateStore: return "state_store";
    case secoc::StartError::kTripExhausted: return "trip_exhausted";
    case secoc::StartError::kStateMissing: return "state_missing";
    case secoc::StartError::kStateCorrupt: return "state_corrupt";
  }
  return "unknown";
}

AttackRow skipped(const char* config, const std::string& why) {
  AttackRow row;
  row.layer = "fault";
  row.configuration = config;
  row.attack_class = "F.disk-full";
  row.note = "skipped: " + why;
  return row;
}

// One Secured I-PDU from `engine`; true when it was produced.
bool secoc_send(secoc::Engine& engine, std::uint64_t i, TimePoint now) {
  std::uint8_t payload[8];
  store_be64(payload, i);
  std::uint8_t out[64];
  return engine.protect(0, ByteSpan(payload, sizeof payload), MutableByteSpan(out, sizeof out), secoc::TxInput{{}, now})
      .ok();
}

AttackRow secoc_disk_full(const AttackOptions& options) {
  FullFs fs;
  if (!fs.mounted) return skipped("secoc-state-file", fs.why);
  AttackRow row;
  row.layer = "fault";
  row.configuration = "secoc-state-file";
  row.attack_class = "F.disk-full";
  const SecretBytes key = seeded_key(options.seed ^ 0xD15CULL, 32);
  secoc::FileStateStore store(fs.dir + "/secoc.state");
  TimePoint now = TimePoint::from_ns(kEpochNs);
  auto started = secoc::Engine::start(L::publisher_engine_config(1), store, secoc::StartOptions{true, now});
  if (!started.ok()) return skipped("secoc-state-file", "first start on the empty tmpfs failed: " + store.last_error());
  std::unique_ptr<secoc::Engine> engine = std::move(started).value();
  if (!engine->install_key(0, 1, key, now).ok()) return skipped("secoc-state-file", "key refused");
  const std::uint64_t filled = fs.fill();

  // The trip the state file holds (read on the full file system).
  auto persisted_trip = [&store]() -> std::uint64_t {
    auto s = store.load();
    return s.ok() ? s->tx_trip : 0;
  };
  const std::uint64_t half = options.attempts / 2;
  for (std::uint64_t i = 0; i < half; ++i) {
    ++row.attempts;
    now += Duration::milliseconds(1);
    if (!secoc_send(*engine, i, now)) {
      ++row.rejected["secoc_protect_refused"];
    } else if (engine->trip() <= persisted_trip()) {
      ++row.legit_delivered;  // sent, its FV covered by the persisted trip
    } else {
      ++row.accepted;
    }
  }
  const std::uint64_t running_trip = engine->trip();
  engine.reset();  // the node restarts on the full disk
  std::uint64_t started_on_full = 0;
  for (std::uint64_t i = half; i < options.attempts; ++i) {
    ++row.attempts;
    now += Duration::milliseconds(1);
    auto again = secoc::Engine::start(L::publisher_engine_config(1), store, secoc::StartOptions{false, now});
    if (!again.ok()) {
      ++row.rejected[std::string("secoc_start_refused_") + start_error_name(again.error())];
      continue;
    }
    ++started_on_full;
    std::unique_ptr<secoc::Engine> e = std::move(again).value();
    if (!e->install_key(0, 1, key, now).ok() || !secoc_send(*e, i, now)) {
      ++row.rejected["secoc_protect_refused"];
    } else if (e->trip() <= persisted_trip()) {
      ++row.legit_delivered;
    } else {
      ++row.accepted;
    }
  }
  row.note = "state file on a full 64 KiB tmpfs (" + std::to_string(filled / 1024) +
             " KiB filler): running sender (trip " + std::to_string(running_trip) +
             " persisted at start) keeps sending; " + std::to_string(options.attempts - half) +
             " restarts on the full disk, " + std::to_string(started_on_full) +
             " started; legit_delivered = sent with a persisted trip";
  return row;
}

macsec::SecYConfig pn_secy_config(macsec::Sci sci) {
  macsec::SecYConfig y;
  y.sci = sci;
  y.suite = macsec::CipherSuite::kGcmAes128;
  return y;
}

AttackRow macsec_disk_full(const AttackOptions& options) {
  FullFs fs;
  if (!fs.mounted) return skipped("macsec-pn-state-file", fs.why);
  AttackRow row;
  row.layer = "fault";
  row.configuration = "macsec-pn-state-file";
  row.attack_class = "F.disk-full";
  const std::string path = fs.dir + "/pn.state";
  std::string detail;
  auto created = macsec::FilePnStore::create(path, &detail);
  if (!created.ok()) return skipped("macsec-pn-state-file", "PN state file: " + detail);
  macsec::FilePnStore store = std::move(created).value();
  const std::uint8_t mac[6] = {0x02, 0x4C, 0x53, 0x00, 0xD1, 0x01};
  const macsec::Sci sci = macsec::Sci::from_parts(mac, 1);
  const SecretBytes sak = seeded_key(options.seed ^ 0xD15C2ULL, 16);
  macsec::SaKeys keys;
  keys.sak = sak.span();
  macsec::SecY tx(pn_secy_config(sci));
  tx.set_pn_store(&store, kReserveBlock);
  if (!tx.install_tx_sa(0, keys, 1, macsec::PnStart::kNewKey).ok() || !tx.set_encoding_sa(0).ok())
    return skipped("macsec-pn-state-file", "transmit SA refused");

  std::vector<std::uint8_t> plain(80, 0x11);
  std::memcpy(plain.data() + 6, mac, 6);
  store_be16(plain.data() + 12, 0x0800);
  std::vector<std::uint8_t> out(plain.size() + macsec::kSecTagSizeWithSci + macsec::kIcvSize);
  for (int i = 0; i < kFramesBeforeFull; ++i) {
    if (!tx.protect(plain, out).ok()) return skipped("macsec-pn-state-file", "protect before the disk was full");
  }
  const std::uint64_t reserved = tx.tx_sa_status(0).pn_persisted;
  const std::uint64_t filled = fs.fill();
  std::vector<std::uint64_t> sent;  // PNs used after the disk was full
  for (std::uint64_t i = 0; i < options.attempts; ++i) {
    ++row.attempts;
    const std::uint64_t pn = tx.tx_sa_status(0).next_pn;
    auto n = tx.protect(plain, out);
    if (n.ok()) {
      sent.push_back(pn);
    } else {
      // OutPktsPnNotPersisted is the SecY's counter for the refusal we expect.
      ++row.rejected[n.error() == macsec::ProtectError::kPnNotPersisted ? "OutPktsPnNotPersisted"
                                                                         : "protect_refused_other"];
    }
  }
  // What the file says now, read back from disk.
  std::uint64_t on_disk = 0;
  auto reopened = macsec::FilePnStore::open(path, &detail);
  if (reopened.ok()) {
    for (const auto& r : reopened->records())
      if (r.key.direction == macsec::PnDirection::kTransmit) on_disk = r.highest;
  }
  for (std::uint64_t pn : sent) {
    if (pn <= on_disk) {
      ++row.legit_delivered;  // sent inside the reserved, persisted block
    } else {
      ++row.accepted;
    }
  }
  row.note = "PN state file on a full 64 KiB tmpfs (" + std::to_string(filled / 1024) + " KiB filler) after " +
             std::to_string(kFramesBeforeFull) + " frames (PNs reserved to " + std::to_string(reserved) +
             "); file reads " + (reopened.ok() ? std::to_string(on_disk) : "unreadable: " + detail) +
             "; legit_delivered = frames sent inside the persisted block";
  return row;
}

}  // namespace

std::vector<AttackRow> run_disk_full(const AttackOptions& options) {
  std::vector<AttackRow> rows;
  rows.push_back(secoc_disk_full(options));
  rows.push_back(macsec_disk_full(options));
  return rows;
}

}  // namespace layersec::attack
