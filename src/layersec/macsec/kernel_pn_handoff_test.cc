// Tests of the PN state handed to the kernel back end (kernel_pn_handoff.h):
// a key without a record is refused unless declared new, every SA resumes
// after its record, and every record is then used up, so a second run with
// the same keys is refused.
#include "layersec/macsec/kernel_pn_handoff.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace layersec::macsec {
namespace {

SaConfig sa(std::uint8_t an, std::uint64_t pn, std::uint8_t seed, const std::string& pointer) {
  SaConfig s;
  s.an = an;
  s.pn = pn;
  std::vector<std::uint8_t> k(16, seed);
  s.sak = SecretBytes(k);
  s.pointer = pointer;
  return s;
}

LinkConfig config() {
  LinkConfig c;
  c.secy.suite = CipherSuite::kGcmAes128;
  c.pn_state_file = "/nonexistent/state";
  c.tx_sas.push_back(sa(0, 1, 1, "/tx/sas/0"));
  RxScConfig rx;
  rx.sci = Sci{0x0200000000020001ULL};
  rx.sas.push_back(sa(2, 5, 3, "/rx/0/sas/0"));
  c.rx_scs.push_back(std::move(rx));
  return c;
}

constexpr Sci kOurSci{0x0200000000010001ULL};

std::string error_of(LinkConfig& c, PnStore& store, bool new_key) {
  try {
    consume_pn_state_for_kernel(c, kOurSci, store, new_key);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

PnKey key_of(const LinkConfig& c, const SaConfig& s, PnDirection d, Sci sci) {
  return PnKey{d, sci, pn_fingerprint(c.secy.suite, s.keys())};
}

TEST(KernelPnHandoffTest, KeyWithoutRecordIsRefusedUnlessNew) {
  MemoryPnStore store;
  LinkConfig c = config();
  const std::string e = error_of(c, store, /*new_key=*/false);
  EXPECT_EQ(e.rfind("/tx/sas/0: ", 0), 0u) << e;
  c.tx_sas[0].new_key = true;
  const std::string rx = error_of(c, store, false);
  EXPECT_EQ(rx.rfind("/rx/0/sas/0: ", 0), 0u) << rx;
}

TEST(KernelPnHandoffTest, RecordsAreResumedThenUsedUp) {
  MemoryPnStore store;
  LinkConfig c = config();
  ASSERT_TRUE(store.save(key_of(c, c.tx_sas[0], PnDirection::kTransmit, kOurSci), 0, 50).ok());
  EXPECT_EQ(error_of(c, store, /*new_key=*/true), "(no error)");
  EXPECT_EQ(c.tx_sas[0].pn, 51u);     // after its record
  EXPECT_EQ(c.rx_scs[0].sas[0].pn, 5u);  // no record: as configured
  const std::uint64_t last = max_pn(CipherSuite::kGcmAes128);
  for (const auto& [s, d, sci] : {std::tuple{&c.tx_sas[0], PnDirection::kTransmit, kOurSci},
                                  std::tuple{&c.rx_scs[0].sas[0], PnDirection::kReceive, c.rx_scs[0].sci}}) {
    auto r = store.load(key_of(c, *s, d, sci));
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ(**r, last);
  }
  // A second run with the same keys: refused, even when declared new.
  LinkConfig again = config();
  const std::string e = error_of(again, store, true);
  EXPECT_EQ(e.rfind("/tx/sas/0: ", 0), 0u);
  EXPECT_NE(e.find("(a key given to the kernel back end serves one run)"), std::string::npos) << e;
}

TEST(KernelPnHandoffTest, FailingStoreIsFatal) {
  MemoryPnStore store;
  store.set_fail_saves(true);
  LinkConfig c = config();
  EXPECT_EQ(error_of(c, store, true), "/tx/sas/0: cannot write the PN state file");
}

}  // namespace
}  // namespace layersec::macsec
