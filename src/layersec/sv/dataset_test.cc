#include "layersec/sv/dataset.h"

#include <gtest/gtest.h>

#include <vector>

namespace layersec::sv {
namespace {

TEST(SvDataset, FourIFourUIsEightInt32WithQuality) {
  const Dataset ds = Dataset::four_i_four_u();
  ASSERT_EQ(ds.channel_count(), 8u);
  EXPECT_EQ(ds.encoded_size(), 64u);
  const char* names[] = {"IA", "IB", "IC", "IN", "VA", "VB", "VC", "VN"};
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(ds.channels()[i].name, names[i]);
    EXPECT_EQ(ds.value_offset(i), 8 * i);
  }
  std::vector<Sample> in(8);
  for (std::size_t i = 0; i < 8; ++i) in[i] = Sample{-1000 * static_cast<std::int32_t>(i) - 1, quality::kInvalid | quality::kTest};
  std::vector<std::uint8_t> bytes(64);
  ASSERT_TRUE(ds.encode(in, bytes));
  // Big-endian two's complement value, then the quality word.
  EXPECT_EQ(load_be32(&bytes[0]), 0xFFFFFFFFu);
  EXPECT_EQ(load_be32(&bytes[4]), 0x801u);
  std::vector<Sample> out(8);
  ASSERT_TRUE(ds.decode(bytes, out));
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(out[i].value, in[i].value);
    EXPECT_EQ(out[i].quality, in[i].quality);
  }
  EXPECT_FALSE(ds.decode(ByteSpan(bytes.data(), 63), out));
  EXPECT_FALSE(ds.encode(std::span<const Sample>(in.data(), 7), bytes));
}

TEST(SvDataset, ConfigurableChannels) {
  const Dataset ds({Channel{"f", ValueType::kFloat32, true}, Channel{"u", ValueType::kUint32, false},
                    Channel{"i", ValueType::kInt32, true}});
  EXPECT_EQ(ds.encoded_size(), 20u);
  EXPECT_EQ(ds.value_offset(1), 8u);
  EXPECT_EQ(ds.value_offset(2), 12u);
  std::vector<Sample> in(3);
  set_float(in[0], 230.5f);
  in[0].quality = 0;
  in[1].value = static_cast<std::int32_t>(0xDEADBEEFu);
  in[2] = Sample{-7, quality::kQuestionable};
  std::vector<std::uint8_t> bytes(20);
  ASSERT_TRUE(ds.encode(in, bytes));
  EXPECT_EQ(load_be32(&bytes[0]), 0x43668000u);  // 230.5 in IEEE 754
  std::vector<Sample> out(3);
  ASSERT_TRUE(ds.decode(bytes, out));
  EXPECT_FLOAT_EQ(float_value(out[0]), 230.5f);
  EXPECT_EQ(static_cast<std::uint32_t>(out[1].value), 0xDEADBEEFu);
  EXPECT_EQ(out[1].quality, 0u);
  EXPECT_EQ(out[2].value, -7);
  EXPECT_EQ(out[2].quality, quality::kQuestionable);
  EXPECT_EQ(Dataset::int32_with_quality(3).encoded_size(), 24u);
}

}  // namespace
}  // namespace layersec::sv
