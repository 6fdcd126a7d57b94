// Tests of what `macsec up` reports about SAs (link_report.h): the JSON of
// rotation actions, the SA lines (key ids only), the PN resumption notes
// and warnings over a SecY with an in-memory PN store, and every_key_new.
#include "layersec/macsec/link_report.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace layersec::macsec {
namespace {

SaConfig sa(std::uint8_t an, std::uint64_t pn, std::uint8_t seed, bool new_key = false) {
  SaConfig s;
  s.an = an;
  s.pn = pn;
  std::vector<std::uint8_t> k(16);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(seed + i);
  s.sak = SecretBytes(k);
  s.new_key = new_key;
  s.pointer = "/tx/sas/" + std::to_string(an);
  return s;
}

LinkConfig config(bool new_keys) {
  LinkConfig c;
  c.secy.suite = CipherSuite::kGcmAes128;
  c.sci = Sci{0x0200000000010001ULL};
  c.encoding_an = 1;
  c.tx_sas.push_back(sa(0, 1, 1, new_keys));
  c.tx_sas.push_back(sa(1, 100, 2, new_keys));
  RxScConfig rx;
  rx.sci = Sci{0x0200000000020001ULL};
  rx.sas.push_back(sa(0, 5, 3, new_keys));
  c.rx_scs.push_back(std::move(rx));
  return c;
}

const net::MacAddress kMac{{0x02, 0, 0, 0, 0, 1}};

TEST(LinkReportTest, ActionsJsonNamesTheDetailByKind) {
  using K = RotationAction::Kind;
  const std::vector<RotationAction> actions{
      {K::kTxSaInstalled, Sci{}, 2, 1, "k1"},
      {K::kEncodingSaSwitched, Sci{}, 2, 0, "1"},
      {K::kSettingChanged, Sci{}, 0, 0, "replay_window"},
      {K::kRxSaInstalled, Sci{0x0200000000020001ULL}, 1, 7, "k2"},
  };
  const nlohmann::json j = rotation_actions_json(actions);
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0], (nlohmann::json{{"action", std::string(to_string(K::kTxSaInstalled))}, {"an", 2}, {"pn", 1},
                                  {"key_id", "k1"}}));
  EXPECT_FALSE(j[0].contains("sci"));
  EXPECT_EQ(j[1]["previous"], "1");
  EXPECT_FALSE(j[1].contains("pn"));
  EXPECT_EQ(j[2]["setting"], "replay_window");
  EXPECT_EQ(j[3]["sci"], "0200000000020001");
  EXPECT_EQ(j[3]["key_id"], "k2");
  EXPECT_EQ(j[3]["pn"], 7);
  EXPECT_TRUE(rotation_actions_json({}).is_array());
}

TEST(LinkReportTest, SaLinesCarryKeyIdsOnly) {
  const LinkConfig c = config(false);
  std::ostringstream out;
  print_link_sas(out, c);
  const std::string expected = "  tx an 0 pn 1 key id " + key_id(c.tx_sas[0].sak) + "\n  tx an 1 pn 100 key id " +
                               key_id(c.tx_sas[1].sak) + " (encoding)\n  rx sci 0200000000020001 an 0 pn 5 key id " +
                               key_id(c.rx_scs[0].sas[0].sak) + "\n";
  EXPECT_EQ(out.str(), expected);
}

TEST(LinkReportTest, EveryKeyNewNeedsTheFlagOrEverySa) {
  EXPECT_TRUE(every_key_new(config(false), true));
  EXPECT_FALSE(every_key_new(config(false), false));
  EXPECT_TRUE(every_key_new(config(true), false));
  LinkConfig mixed = config(true);
  mixed.rx_scs[0].sas[0].new_key = false;
  EXPECT_FALSE(every_key_new(mixed, false));
}

TEST(LinkReportTest, FreshStartSaysNothingAndRestartWarns) {
  MemoryPnStore store;
  const LinkConfig c = config(true);
  {
    SecY first = make_secy(c, kMac, &store, /*all_keys_new=*/true);
    std::ostringstream out;
    report_pn_resumption(out, first, c, true);
    EXPECT_EQ(out.str(), "");
    std::vector<std::uint8_t> plain(60, 0x11);
    std::vector<std::uint8_t> secure(plain.size() + 64);
    ASSERT_TRUE(first.protect(plain, secure).ok());  // PN 100 on the encoding SA (AN 1)
    ASSERT_TRUE(first.persist_pn_state().ok());
  }
  SecY again = make_secy(c, kMac, &store, /*all_keys_new=*/false);
  std::ostringstream out;
  report_pn_resumption(out, again, c, /*new_key=*/true);
  const std::string text = out.str();
  // Declared new, but the keys have PN state now.
  EXPECT_NE(text.find("macsec up: note: key id " + key_id(c.tx_sas[1].sak) + " is not new"), std::string::npos);
  EXPECT_NE(text.find("macsec up: warning: static SAK key id " + key_id(c.tx_sas[1].sak) +
                      " (tx AN 1) was used before this start (PNs up to 100 may have been sent); resuming at PN 101"),
            std::string::npos)
      << text;
  // Never key material: the SAK of AN 1 is 02 03 04 ...
  EXPECT_EQ(text.find("02030405"), std::string::npos);
}

}  // namespace
}  // namespace layersec::macsec
