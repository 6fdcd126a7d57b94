#include "layersec/net/pcap.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "layersec/base/file.h"
#include "layersec/base/hex.h"
#include "layersec/net/netns.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_attack.h"
#include "layersec/net/sim_host.h"
#include "support/temp_files.h"

namespace layersec::net {
namespace {

using Bytes = std::vector<std::uint8_t>;

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "layersec_net_" + std::to_string(::getpid()) + "_" + name;
}

struct FrameLog final : FrameRecorder {
  void record(TimePoint t, ByteSpan f) override { frames.push_back({t, Bytes(f.begin(), f.end())}); }
  std::vector<std::pair<TimePoint, Bytes>> frames;
};

// Runs a small sim scenario (ARP, unicast request/response, tagged multicast)
// with a pcap tap and a FrameLog on the forwarded frames.
void run_scenario(PcapWriter& pcap, FrameLog& log) {
  Simulator sim(1);
  Segment seg(sim);
  seg.add_tap(&pcap, TapPoint::kForwarded);
  seg.add_tap(&log, TapPoint::kForwarded);
  SimHostConfig ca;
  ca.mac = MacAddress::local(1);
  ca.ip = Ipv4Address::from_octets(10, 0, 0, 1);
  SimHostConfig cb = ca;
  cb.mac = MacAddress::local(2);
  cb.ip = Ipv4Address::from_octets(10, 0, 0, 2);
  cb.vlan = VlanTag{kEtherTypeCTag, 5, false, 100};
  SimHost a(sim, ca), b(sim, cb);
  a.attach(seg);
  b.attach(seg);
  const Ipv4Address group = Ipv4Address::from_octets(239, 255, 0, 1);
  a.join_group(group);
  ASSERT_TRUE(a.bind(40000, [](const UdpDatagram&) {}).ok());
  ASSERT_TRUE(b.bind(40001, [&](const UdpDatagram& d) { ASSERT_TRUE(b.send_to(40001, d.src, d.payload).ok()); }).ok());
  const Bytes request(33, 0x42);  // odd length exercises checksum padding
  ASSERT_TRUE(a.send_to(40000, {cb.ip, 40001}, request).ok());
  sim.run_until_idle();
  ASSERT_TRUE(b.send_to(40001, {group, 40000}, Bytes(200, 0x17)).ok());
  sim.run_until_idle();
  seg.remove_tap(&pcap);
  seg.remove_tap(&log);
}

TEST(PcapTest, WriteThenReadBackIdentical) {
  const std::string path = temp_path("rt.pcap");
  FrameLog log;
  {
    std::string err;
    auto w = PcapWriter::open(path, PcapPrecision::kNano, Duration::seconds(1'700'000'000), &err);
    ASSERT_TRUE(w.ok()) << err;
    run_scenario(*w, log);
    EXPECT_EQ(w->records(), log.frames.size());
  }
  // ARP request + reply, request, response, multicast.
  ASSERT_EQ(log.frames.size(), 5u);
  auto r = PcapReader::open(path);
  ASSERT_TRUE(r.ok());
  const auto records = r->read_all();
  ASSERT_EQ(records.size(), log.frames.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(to_hex(records[i].frame), to_hex(log.frames[i].second));
    EXPECT_EQ(records[i].original_length, log.frames[i].second.size());
    EXPECT_EQ(records[i].time, log.frames[i].first + Duration::seconds(1'700'000'000));
  }
  EXPECT_EQ(r->next().error(), PcapError::kEndOfFile);
  std::remove(path.c_str());
}

TEST(PcapTest, MicrosecondPrecisionAndErrors) {
  const std::string path = temp_path("us.pcap");
  {
    auto w = PcapWriter::open(path, PcapPrecision::kMicro);
    ASSERT_TRUE(w.ok());
    w->record(TimePoint::from_ns(1'234'567'891), Bytes(60, 1));
    w->close();
    w->record(TimePoint::from_ns(5), Bytes(60, 2));  // ignored after close
    EXPECT_EQ(w->records(), 1u);
  }
  auto r = PcapReader::open(path);
  ASSERT_TRUE(r.ok());
  auto rec = r->next();
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->time.ns(), 1'234'567'000);  // truncated to microseconds
  EXPECT_EQ(r->next().error(), PcapError::kEndOfFile);
  std::remove(path.c_str());

  std::string err;
  EXPECT_EQ(PcapReader::open(temp_path("missing.pcap"), &err).error(), PcapError::kOpenFailed);
  EXPECT_FALSE(err.empty());
  EXPECT_EQ(PcapWriter::open("/nonexistent-dir/x.pcap").error(), PcapError::kOpenFailed);
}

// Five 60-byte records at known offsets: file header 24 bytes, then per
// record a 16-byte header and 60 bytes of frame.
std::string write_five(const std::string& name) {
  const std::string path = temp_path(name);
  auto w = PcapWriter::open(path, PcapPrecision::kMicro);
  EXPECT_TRUE(w.ok());
  for (int i = 0; i < 5; ++i) w->record(TimePoint::from_ns(1'000'000'000LL * (i + 1)), Bytes(60, static_cast<std::uint8_t>(i)));
  w->close();
  EXPECT_EQ(w->records(), 5u);
  EXPECT_EQ(std::filesystem::file_size(path), 24u + 5 * (16 + 60));
  return path;
}

// Issue 13 item 13: a truncated capture was read as a short one (a read
// error was treated as the end of the file) and the command exited 0.
TEST(PcapTest, CaptureCutInsideARecordIsTruncatedNotShort) {
  const std::string path = write_five("cut.pcap");
  std::filesystem::resize_file(path, 24 + 4 * 76 + 16 + 30);  // half of record 5's frame
  auto r = PcapReader::open(path);
  ASSERT_TRUE(r.ok());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(r->next().ok()) << i;
  auto fifth = r->next();
  ASSERT_FALSE(fifth.ok());
  EXPECT_EQ(fifth.error(), PcapError::kTruncated);
  EXPECT_EQ(r->last_error().rfind(path + ": truncated capture: record 5: truncated dump file", 0), 0u)
      << r->last_error();
  EXPECT_EQ(r->next().error(), PcapError::kTruncated) << "the error is sticky, not end of file";
  // read_all throws instead of returning four records.
  auto again = PcapReader::open(path);
  ASSERT_TRUE(again.ok());
  try {
    (void)again->read_all();
    ADD_FAILURE() << "read_all returned a truncated capture";
  } catch (const PcapReadError& e) {
    EXPECT_EQ(e.kind(), PcapError::kTruncated);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  // Cut inside a record header, and inside the file header.
  std::filesystem::resize_file(path, 24 + 76 + 5);
  auto h = PcapReader::open(path);
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(h->next().ok());
  EXPECT_EQ(h->next().error(), PcapError::kTruncated);
  std::filesystem::resize_file(path, 10);
  std::string err;
  EXPECT_EQ(PcapReader::open(path, &err).error(), PcapError::kTruncated);
  EXPECT_EQ(err.rfind(path + ": truncated capture", 0), 0u) << err;
  std::remove(path.c_str());
}

TEST(PcapTest, CorruptRecordLengthIsAnErrorNotTheEnd) {
  const std::string path = write_five("corrupt.pcap");
  {
    // Record 2's caplen (offset 8 in its header) becomes 0xffffffff.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(24 + 76 + 8);
    const char ff[4] = {'\xff', '\xff', '\xff', '\xff'};
    f.write(ff, 4);
  }
  auto r = PcapReader::open(path);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->next().ok());
  EXPECT_EQ(r->next().error(), PcapError::kReadFailed);
  EXPECT_NE(r->last_error().find("corrupt capture: record 2"), std::string::npos) << r->last_error();
  auto again = PcapReader::open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_THROW((void)again->read_all(), PcapReadError);
  std::remove(path.c_str());
}

// Issue 13 item 12: a FIFO given as a pcap blocked pcap_open_offline.
TEST(PcapTest, ReaderRefusesFifoAndDevicesWithoutBlocking) {
  const std::string fifo = temp_path("in.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string err;
  EXPECT_EQ(PcapReader::open(fifo, &err).error(), PcapError::kOpenFailed);
  EXPECT_EQ(err, fifo + ": not a regular file (FIFO)");
  std::remove(fifo.c_str());
  EXPECT_EQ(PcapReader::open("/dev/zero", &err).error(), PcapError::kOpenFailed);
  EXPECT_EQ(err, "/dev/zero: not a regular file (device)");
}

// Issue 13 item 13: `--pcap` followed a symlink and overwrote a key file.
TEST(PcapTest, WriterRefusesSymlinkAndDevice) {
  const std::string key = temp_path("victim.key");
  std::ofstream(key) << "secret\n";
  const std::string link = temp_path("link.pcap");
  ASSERT_EQ(::symlink(key.c_str(), link.c_str()), 0);
  std::string err;
  EXPECT_EQ(PcapWriter::open(link, PcapPrecision::kMicro, Duration::zero(), &err).error(), PcapError::kOpenFailed);
  EXPECT_EQ(err, link + ": is a symbolic link (refused)");
  std::ifstream in(key);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "secret");
  std::remove(link.c_str());
  std::remove(key.c_str());
  // /dev/full: refused up front instead of "wrote 5 frames" with exit 0.
  EXPECT_EQ(PcapWriter::open("/dev/full", PcapPrecision::kMicro, Duration::zero(), &err).error(),
            PcapError::kOpenFailed);
  EXPECT_EQ(err, "/dev/full: not a regular file (device)");
}

// A write that fails (here: RLIMIT_FSIZE, EFBIG) is reported by close() with
// the path; it used to vanish in pcap_dump_close.
TEST(PcapTest, WriteFailureIsThrownByClose) {
  const std::string path = temp_path("limited.pcap");
  std::string what;
  bool failed = false;
  std::uint64_t written = 0;
  {
    testing::FileSizeLimit limit(8192);
    auto w = PcapWriter::open(path, PcapPrecision::kMicro);
    if (w.ok()) {
      for (int i = 0; i < 100; ++i) w->record(TimePoint::from_ns(i), Bytes(1000, 7));
      try {
        w->close();
      } catch (const FileError& e) {
        what = e.what();
        failed = w->failed();
      }
      written = w->records();
    }
  }
  EXPECT_TRUE(failed);
  EXPECT_EQ(what, path + ": write failed: File too large");
  EXPECT_LT(written, 100u);
  std::remove(path.c_str());
}

bool have_tshark() { return run_command({"sh", "-c", "command -v tshark"}) == 0; }

// tshark runs with HOME pointing nowhere so no personal Wireshark profile
// (preferences, disabled dissectors) changes what it reports, and so an
// unreadable profile directory cannot crash it.
const char* const kTshark = "HOME=/nonexistent tshark";

// tshark fields for every frame, one line per frame.
std::vector<std::string> tshark_lines(const std::string& path, const std::string& fields) {
  std::string out;
  const std::string cmd = std::string(kTshark) + " -r '" + path +
                          "' -o udp.check_checksum:TRUE -o ip.check_checksum:TRUE -T fields -E separator=, " +
                          fields + " 2>/dev/null";
  EXPECT_EQ(run_command({"sh", "-c", cmd}, &out), 0);
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(PcapTest, TsharkDecodesSimCaptureWithValidChecksums) {
  if (!have_tshark()) GTEST_SKIP() << "tshark is not installed; cannot cross-check the capture";
  const std::string path = temp_path("tshark.pcap");
  FrameLog log;
  {
    auto w = PcapWriter::open(path);
    ASSERT_TRUE(w.ok());
    run_scenario(*w, log);
  }
  const auto lines = tshark_lines(
      path, "-e frame.len -e eth.type -e vlan.id -e vlan.priority -e arp.opcode -e ip.src -e ip.dst -e udp.srcport "
            "-e udp.dstport -e udp.length -e ip.checksum.status -e udp.checksum.status");
  ASSERT_EQ(lines.size(), 5u);
  // ARP request from A (broadcast), ARP reply from the tagged B.
  EXPECT_EQ(lines[0], "60,0x0806,,,1,,,,,,,");
  EXPECT_EQ(lines[1], "60,0x8100,100,5,2,,,,,,,");
  // Status 1 = "Good" for both checksums.
  EXPECT_EQ(lines[2], "75,0x0800,,,,10.0.0.1,10.0.0.2,40000,40001,41,1,1");
  EXPECT_EQ(lines[3], "79,0x8100,100,5,,10.0.0.2,10.0.0.1,40001,40000,41,1,1");
  EXPECT_EQ(lines[4], "246,0x8100,100,5,,10.0.0.2,239.255.0.1,40001,40000,208,1,1");
  // Nothing flagged as bad or malformed anywhere.
  std::string flagged;
  ASSERT_EQ(run_command({"sh", "-c",
                         std::string(kTshark) + " -r '" + path +
                             "' -o udp.check_checksum:TRUE -o ip.check_checksum:TRUE -Y "
                             "'ip.checksum.status == 0 || udp.checksum.status == 0 || _ws.malformed || "
                             "_ws.expert.severity >= warning' 2>/dev/null"},
                        &flagged),
            0);
  EXPECT_EQ(flagged, "");
  std::remove(path.c_str());
}

TEST(PcapTest, TsharkFlagsTamperedChecksum) {
  // Negative control: the same checks do catch a broken UDP checksum.
  if (!have_tshark()) GTEST_SKIP() << "tshark is not installed; cannot cross-check the capture";
  const std::string path = temp_path("tampered.pcap");
  {
    auto w = PcapWriter::open(path);
    ASSERT_TRUE(w.ok());
    UdpFrameSpec s;
    s.src_mac = MacAddress::local(1);
    s.dst_mac = MacAddress::local(2);
    s.src = {Ipv4Address::from_octets(10, 0, 0, 1), 5000};
    s.dst = {Ipv4Address::from_octets(10, 0, 0, 2), 5001};
    Bytes buf(kEthernetMaxFrameSize);
    auto n = build_udp_frame(s, Bytes(20, 3), buf);
    ASSERT_TRUE(n.ok());
    buf.resize(*n);
    w->record(TimePoint{}, buf);
    buf[45] ^= 0x10;
    w->record(TimePoint::from_ns(1000), buf);
  }
  const auto lines = tshark_lines(path, "-e ip.checksum.status -e udp.checksum.status");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "1,1");
  EXPECT_EQ(lines[1], "1,0");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace layersec::net
