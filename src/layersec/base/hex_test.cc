// Tests for the hex helpers (hex.h).
#include "layersec/base/hex.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace layersec {
namespace {

TEST(Hex, EncodesLowerCase) {
  const std::vector<std::uint8_t> d = {0x00, 0x01, 0x7F, 0x80, 0xAB, 0xFF};
  EXPECT_EQ(to_hex(d), "00017f80abff");
  EXPECT_EQ(to_hex({}), "");
}

TEST(Hex, RoundTripsEveryByte) {
  std::vector<std::uint8_t> all(256);
  for (int i = 0; i < 256; ++i) all[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
  const auto text = to_hex(all);
  EXPECT_EQ(text.size(), 512u);
  auto back = from_hex(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, all);
}

TEST(Hex, AcceptsUpperCaseAndSeparators) {
  const std::vector<std::uint8_t> expect = {0xDE, 0xAD, 0xBE, 0xEF};
  for (const char* s : {"DEADBEEF", "deadbeef", "DeAdBeEf", "de ad be ef", "de:ad:be:ef", "de-ad-be-ef",
                        "dead\nbeef", "\tdeadbeef ", " de ad  be ef "}) {
    auto v = from_hex(s);
    ASSERT_TRUE(v.has_value()) << s;
    EXPECT_EQ(*v, expect) << s;
  }
  auto empty = from_hex("");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

TEST(Hex, RejectsBadInput) {
  for (const char* s : {"0", "abc", "0g", "g0", "zz", "12 3", "1:23", "0x12", "12\x01", "é1", "1 2"}) {
    EXPECT_FALSE(from_hex(s).has_value()) << s;
  }
}

TEST(Hex, HexBytes) {
  EXPECT_EQ(hex_bytes("0102"), (std::vector<std::uint8_t>{1, 2}));
  EXPECT_TRUE(hex_bytes("").empty());
}

TEST(HexDeathTest, HexBytesAbortsOnBadInput) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)hex_bytes("xyz"), "");
}

}  // namespace
}  // namespace layersec
