// The lower-interface guard (lower_guard.h) in a network namespace of its
// own (root; skipped otherwise): an address on the lower interface is
// refused with the command to fix it and nothing is changed; apply() sets
// the sysctls and NOARP and installs the nftables filter (a second guard on
// the same interface is refused by the table's name); restore() puts
// everything back, and a setting changed behind the guard's back is left
// alone and reported. The traffic the guard stops is tested across
// namespaces by tests/cli/macsec_plain_isolation.sh.
#include "layersec/macsec/lower_guard.h"

#include <gtest/gtest.h>
#include <net/if.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>

#include "layersec/net/netns.h"

namespace layersec::macsec {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::string v;
  in >> v;
  return v;
}

void write(const std::string& path, const std::string& v) { std::ofstream(path) << v << "\n"; }

bool noarp(const std::string& ifname) {
  std::string out;
  net::run_command({"ip", "-o", "link", "show", ifname}, &out);
  return out.find("NOARP") != std::string::npos;
}

class LowerGuardLive : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!net::netns_available(&reason)) GTEST_SKIP() << "network namespaces unavailable: " << reason;
    name_ = "lsguard" + std::to_string(::getpid());
    ok_ = net::run_command({"ip", "netns", "add", name_}) == 0;
    ASSERT_TRUE(ok_);
    scope_.emplace(name_);
    ASSERT_EQ(net::run_command({"ip", "link", "add", "lg0", "type", "veth", "peer", "name", "lg1"}), 0);
    ASSERT_EQ(net::run_command({"ip", "link", "set", "lg0", "up"}), 0);
  }
  void TearDown() override {
    scope_.reset();
    if (ok_) net::run_command({"ip", "netns", "del", name_});
  }
  const std::string v4_ = "/proc/sys/net/ipv4/conf/lg0/";
  const std::string v6_ = "/proc/sys/net/ipv6/conf/lg0/";
  std::string name_;
  bool ok_ = false;
  std::optional<net::NetnsScope> scope_;
};

TEST_F(LowerGuardLive, AnAddressOnTheLowerInterfaceIsRefusedAndNothingChanges) {
  ASSERT_EQ(net::run_command({"ip", "addr", "add", "10.84.0.1/24", "dev", "lg0"}), 0);
  const std::string arp_before = read(v4_ + "arp_ignore");
  try {
    (void)LowerLinkGuard::apply({"lg0", LowerLinkPolicy::kIsolate, false});
    FAIL() << "a lower interface with an IPv4 address was accepted";
  } catch (const LowerGuardError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("has address 10.84.0.1/24"), std::string::npos) << m;
    EXPECT_NE(m.find("ip addr del 10.84.0.1/24 dev lg0"), std::string::npos) << m;
  }
  EXPECT_EQ(read(v4_ + "arp_ignore"), arp_before);
  EXPECT_FALSE(noarp("lg0"));
  EXPECT_EQ(unsafe_lower_addresses("lg0").size(), 1u);
  // "unchanged" is the operator's explicit choice: no checks, no changes.
  EXPECT_NO_THROW((void)LowerLinkGuard::apply({"lg0", LowerLinkPolicy::kUnchanged, false}));
}

TEST_F(LowerGuardLive, ApplySetsEverythingAndRestorePutsItBack) {
  const std::string arp = read(v4_ + "arp_ignore");
  const std::string rp = read(v4_ + "rp_filter");
  const std::string v6 = read(v6_ + "disable_ipv6");
  {
    LowerLinkGuard g = LowerLinkGuard::apply({"lg0", LowerLinkPolicy::kIsolate, false});
    EXPECT_TRUE(g.filter_installed());
    EXPECT_EQ(read(v4_ + "arp_ignore"), "8");
    EXPECT_EQ(read(v4_ + "rp_filter"), "1");
    EXPECT_EQ(read(v6_ + "disable_ipv6"), "1");
    EXPECT_TRUE(noarp("lg0"));
    // The table name is per interface: a second isolating guard is refused
    // (another `macsec up` on the same link), and the first stays intact.
    try {
      (void)LowerLinkGuard::apply({"lg0", LowerLinkPolicy::kIsolate, false});
      ADD_FAILURE() << "a second nftables table on the same interface was accepted";
    } catch (const LowerGuardError& e) {
      EXPECT_NE(std::string(e.what()).find("another layersec macsec up on this interface"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(read(v4_ + "arp_ignore"), "8");
    EXPECT_TRUE(g.restore().empty());
    EXPECT_FALSE(g.filter_installed());
  }
  EXPECT_EQ(read(v4_ + "arp_ignore"), arp);
  EXPECT_EQ(read(v4_ + "rp_filter"), rp);
  EXPECT_EQ(read(v6_ + "disable_ipv6"), v6);
  EXPECT_FALSE(noarp("lg0"));
  // The owner socket is gone, so the table is too: a new guard can create it.
  LowerLinkGuard again = LowerLinkGuard::apply({"lg0", LowerLinkPolicy::kIsolate, false});
  EXPECT_TRUE(again.filter_installed());
}

TEST_F(LowerGuardLive, ASettingChangedBehindTheGuardIsLeftAndReported) {
  LowerLinkGuard g = LowerLinkGuard::apply({"lg0", LowerLinkPolicy::kSysctlOnly, false});
  EXPECT_FALSE(g.filter_installed());
  write(v4_ + "rp_filter", "2");
  const auto problems = g.restore();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("rp_filter is 2"), std::string::npos) << problems[0];
  EXPECT_EQ(read(v4_ + "rp_filter"), "2");
}

TEST_F(LowerGuardLive, SysctlOnlyRefusesALooseAllRpFilter) {
  const std::string all = read("/proc/sys/net/ipv4/conf/all/rp_filter");
  write("/proc/sys/net/ipv4/conf/all/rp_filter", "2");
  try {
    (void)LowerLinkGuard::apply({"lg0", LowerLinkPolicy::kSysctlOnly, false});
    ADD_FAILURE() << "sysctl-only accepted a loose all.rp_filter";
  } catch (const LowerGuardError& e) {
    EXPECT_NE(std::string(e.what()).find("net.ipv4.conf.all.rp_filter is 2 (loose)"), std::string::npos) << e.what();
  }
  // "isolate" does not depend on it: the ingress filter drops before IP.
  EXPECT_NO_THROW((void)LowerLinkGuard::apply({"lg0", LowerLinkPolicy::kIsolate, false}));
  write("/proc/sys/net/ipv4/conf/all/rp_filter", all);
}

}  // namespace
}  // namespace layersec::macsec
