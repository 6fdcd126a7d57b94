#include "layersec/someip/sd_message.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "layersec/base/hex.h"

namespace layersec::someip {
namespace {

std::vector<std::uint8_t> build(const SdMessageBuilder& b, std::uint8_t flags = 0xC0,
                                std::uint16_t session = 1) {
  std::vector<std::uint8_t> buf(kHeaderSize + b.payload_size());
  ByteWriter w(buf);
  EXPECT_TRUE(b.write_message(w, session, flags));
  EXPECT_EQ(w.size(), buf.size());
  return buf;
}

// Parses a whole SD message and returns entries/options as values.
struct Decoded {
  std::uint8_t flags = 0;
  std::vector<SdEntry> entries;
  std::vector<SdOption> options;
};

Result<Decoded, SdError> decode(ByteSpan bytes) {
  auto m = parse_message(bytes);
  if (!m) return Err(SdError::kNotSdHeader);
  auto v = parse_sd_message(*m);
  if (!v) return Err(v.error());
  Decoded d;
  d.flags = v->flags();
  for (std::size_t i = 0; i < v->entry_count(); ++i) d.entries.push_back(v->entry(i));
  for (std::size_t i = 0; i < v->option_count(); ++i) d.options.push_back(v->option(i));
  return d;
}

const IpAddress kAddr = IpAddress::v4(192, 168, 1, 10);
IpAddress v6addr() {
  IpAddress a;
  EXPECT_TRUE(parse_ip_address("fd00::1:2", a));
  return a;
}

TEST(SdMessage, RoundTripsEveryEntryAndOptionType) {
  std::vector<std::uint8_t> cfg;
  const std::string_view items[] = {"hostname=ecu1", "mode=test", "flag"};
  ASSERT_TRUE(encode_config_strings(items, cfg));
  const SdOption all_opts[] = {
      SdOption::ipv4_endpoint(kAddr, L4Proto::kUdp, 30501),
      SdOption::ipv4_endpoint(kAddr, L4Proto::kTcp, 30502),
      SdOption::ipv6_endpoint(v6addr(), L4Proto::kUdp, 30503),
      SdOption::ipv4_multicast(IpAddress::v4(239, 1, 2, 3), 30504),
      SdOption::ipv6_multicast(v6addr(), 30505),
      SdOption::ipv4_sd_endpoint(kAddr),
      SdOption::ipv6_sd_endpoint(v6addr()),
      SdOption::load_balancing(3, 100),
      SdOption::configuration(cfg),
  };
  SdMessageBuilder b;
  ASSERT_TRUE(b.add(SdEntry::find_service(0x1234, 0xFFFF, 0xFF, 0xFFFFFFFF, 3)));
  ASSERT_TRUE(b.add(SdEntry::offer_service(0x1234, 1, 2, 7, kTtlInfinite), {all_opts, 3},
                    {all_opts + 7, 2}));
  ASSERT_TRUE(b.add(SdEntry::offer_service(0x1234, 1, 2, 7, 0), {all_opts, 3}));  // StopOffer
  ASSERT_TRUE(b.add(SdEntry::subscribe(0x1234, 1, 2, 0x10, 5, 3), {all_opts + 3, 4}));
  ASSERT_TRUE(b.add(SdEntry::subscribe(0x1234, 1, 2, 0x10, 0, 3)));  // StopSubscribe
  ASSERT_TRUE(b.add(SdEntry::subscribe_ack(0x1234, 1, 2, 0x10, 5, 3), {all_opts + 3, 1}));
  ASSERT_TRUE(b.add(SdEntry::subscribe_ack(0x1234, 1, 2, 0x10, 0, 3)));  // Nack
  // The StopOffer's run reuses the Offer's options.
  EXPECT_EQ(b.options().size(), 9u);

  const auto bytes = build(b, kSdFlagReboot | kSdFlagUnicast, 0x2A);
  auto d = decode(bytes);
  ASSERT_TRUE(d.ok()) << to_string(d.error());
  EXPECT_EQ(d->flags, 0xC0);
  ASSERT_EQ(d->entries.size(), b.entries().size());
  for (std::size_t i = 0; i < d->entries.size(); ++i) EXPECT_EQ(d->entries[i], b.entries()[i]) << i;
  ASSERT_EQ(d->options.size(), b.options().size());
  for (std::size_t i = 0; i < d->options.size(); ++i) EXPECT_TRUE(d->options[i] == b.options()[i]) << i;

  const EntryKind kinds[] = {EntryKind::kFindService, EntryKind::kOfferService,
                             EntryKind::kStopOfferService, EntryKind::kSubscribeEventgroup,
                             EntryKind::kStopSubscribeEventgroup, EntryKind::kSubscribeEventgroupAck,
                             EntryKind::kSubscribeEventgroupNack};
  for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(d->entries[i].kind(), kinds[i]);

  // Configuration strings come back item by item.
  std::vector<std::string> got;
  for (const auto& o : d->options)
    if (o.type == 0x01) for_each_config_string(o.data, [&](std::string_view s) { got.emplace_back(s); });
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "hostname=ecu1");
  EXPECT_EQ(got[2], "flag");
}

TEST(SdMessage, KnownWireBytes) {
  // An OfferService with one IPv4 UDP endpoint option, byte by byte
  // (feat_req_someipsd_47 / _129 layouts).
  SdMessageBuilder b;
  const SdOption ep = SdOption::ipv4_endpoint(IpAddress::v4(10, 0, 0, 1), L4Proto::kUdp, 30509);
  ASSERT_TRUE(b.add(SdEntry::offer_service(0x1111, 0x0001, 0x01, 0x00000002, 3), {&ep, 1}));
  const auto bytes = build(b, 0xC0, 1);
  EXPECT_EQ(to_hex(bytes),
            "ffff8100" "00000030" "00000001" "01010200"  // SOME/IP header
            "c0000000"                                   // flags, reserved
            "00000010"                                   // entries length
            "01000010" "11110001" "01000003" "00000002"  // offer entry
            "0000000c"                                   // options length
            "00090400" "0a000001" "0011772d");           // IPv4 endpoint option
}

std::vector<std::uint8_t> one_offer(std::uint8_t index, std::uint8_t num) {
  SdMessageBuilder b;
  const SdOption ep = SdOption::ipv4_endpoint(kAddr, L4Proto::kUdp, 1000);
  EXPECT_TRUE(b.add(SdEntry::offer_service(1, 1, 1, 0, 3), {&ep, 1}));
  auto bytes = build(b);
  // entry byte 1 = index1, byte 3 = #opt1 << 4
  bytes[kHeaderSize + 8 + 1] = index;
  bytes[kHeaderSize + 8 + 3] = static_cast<std::uint8_t>(num << 4);
  return bytes;
}

TEST(SdMessage, OptionIndexOutOfRangeIsRejected) {
  auto good = decode(one_offer(0, 1));
  EXPECT_TRUE(good.ok());
  auto r = decode(one_offer(1, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), SdError::kOptionIndexOutOfRange);
  auto r2 = decode(one_offer(0, 2));
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error(), SdError::kOptionIndexOutOfRange);
  // #opt = 0 ignores the index.
  auto r3 = decode(one_offer(200, 0));
  EXPECT_TRUE(r3.ok());
}

TEST(SdMessage, TruncatedArraysAreRejected) {
  auto bytes = one_offer(0, 1);
  const std::size_t sd = kHeaderSize;
  auto patch_len = [&](std::vector<std::uint8_t> b) {
    store_be32(b.data() + 4, static_cast<std::uint32_t>(b.size() - 8));
    return b;
  };
  {  // entries length not a multiple of 16
    auto b = bytes;
    store_be32(b.data() + sd + 4, 15);
    auto r = decode(b);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), SdError::kEntriesLengthInvalid);
  }
  {  // entries length past the end
    auto b = bytes;
    store_be32(b.data() + sd + 4, 0x100);
    auto r = decode(b);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), SdError::kEntriesLengthInvalid);
  }
  {  // options array cut short (SOME/IP Length adjusted, so only SD sees it)
    auto b = bytes;
    b.resize(b.size() - 3);
    auto r = decode(patch_len(b));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), SdError::kOptionsLengthInvalid);
  }
  {  // options length says less than the option needs
    auto b = bytes;
    store_be32(b.data() + sd + 8 + 16, 8);
    b.resize(b.size() - 4);
    auto r = decode(patch_len(b));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), SdError::kOptionTruncated);
  }
  {  // trailing bytes after options
    auto b = bytes;
    b.push_back(0);
    auto r = decode(patch_len(b));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), SdError::kTrailingBytes);
  }
  {  // missing options length field
    auto b = bytes;
    b.resize(sd + 8 + 16 + 2);
    auto r = decode(patch_len(b));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), SdError::kTruncated);
  }
}

TEST(SdMessage, OptionValidation) {
  auto bytes = one_offer(0, 1);
  const std::size_t opt = kHeaderSize + 8 + 16 + 4;
  {  // wrong length of a known type
    auto b = bytes;
    b[opt + 1] = 0x0A;
    b.push_back(0);
    store_be32(b.data() + opt - 4, 13);
    store_be32(b.data() + 4, static_cast<std::uint32_t>(b.size() - 8));
    auto r = decode(b);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), SdError::kOptionLengthInvalid);
  }
  {  // bad L4 protocol
    auto b = bytes;
    b[opt + 9] = 0x01;
    auto r = decode(b);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), SdError::kOptionFieldInvalid);
  }
  {  // multicast option over TCP (feat_req_someipsd_723)
    auto b = bytes;
    b[opt + 2] = 0x14;
    b[opt + 9] = 0x06;
    auto r = decode(b);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), SdError::kOptionFieldInvalid);
  }
  {  // unknown option type: skipped, kept raw, message accepted
    auto b = bytes;
    b[opt + 2] = 0x77;
    auto r = decode(b);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->options.size(), 1u);
    EXPECT_EQ(r->options[0].type, 0x77);
    EXPECT_FALSE(is_known_option_type(0x77));
    EXPECT_EQ(r->options[0].data.size(), 8u);
  }
  {  // configuration without terminator
    SdMessageBuilder b;
    const std::uint8_t bad_cfg[] = {3, 'a', '=', 'b'};
    const SdOption o = SdOption::configuration(bad_cfg);
    ASSERT_TRUE(b.add(SdEntry::offer_service(1, 1, 1, 0, 3), {&o, 1}));
    auto r = decode(build(b));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), SdError::kConfigStringInvalid);
  }
}

TEST(SdMessage, HeaderMustBeSd) {
  SdMessageBuilder b;
  ASSERT_TRUE(b.add(SdEntry::find_service(1, 0xFFFF, 0xFF, 0xFFFFFFFF, 3)));
  auto bytes = build(b);
  bytes[14] = 0x00;  // REQUEST instead of NOTIFICATION
  auto r = decode(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), SdError::kNotSdHeader);
}

TEST(SdMessage, BuilderLimits) {
  SdMessageBuilder b;
  std::vector<SdOption> sixteen;
  for (int i = 0; i < 16; ++i)
    sixteen.push_back(SdOption::ipv4_endpoint(kAddr, L4Proto::kUdp, static_cast<std::uint16_t>(i)));
  EXPECT_FALSE(b.add(SdEntry::offer_service(1, 1, 1, 0, 3), sixteen));
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.options().empty());
  EXPECT_TRUE(b.add(SdEntry::offer_service(1, 1, 1, 0, 3), {sixteen.data(), 15}));
}

TEST(SdMessage, IpAddressText) {
  IpAddress a;
  ASSERT_TRUE(parse_ip_address("224.224.224.245", a));
  EXPECT_TRUE(a.is_multicast());
  EXPECT_EQ(a.to_string(), "224.224.224.245");
  ASSERT_TRUE(parse_ip_address("fd00::1:2", a));
  EXPECT_EQ(a.family, IpFamily::kV6);
  EXPECT_EQ(a.to_string(), "fd00::1:2");
  ASSERT_TRUE(parse_ip_address("ff02::1", a));
  EXPECT_TRUE(a.is_multicast());
  EXPECT_FALSE(parse_ip_address("1.2.3", a));
  EXPECT_FALSE(parse_ip_address("1.2.3.256", a));
  EXPECT_FALSE(parse_ip_address("1::2::3", a));
}

}  // namespace
}  // namespace layersec::someip
