#include "layersec/someip/message_json.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "layersec/base/hex.h"

namespace layersec::someip {
namespace {

using nlohmann::json;

TEST(MessageJson, RequestRoundTripsThroughBytes) {
  const json m = json::parse(
      R"({"service":4660,"method":1057,"client":16,"session":5,"interface_version":2,"message_type":0,"payload":"01020304"})");
  const auto bytes = message_from_json(m);
  EXPECT_EQ(to_hex(bytes), "123404210000000c001000050102000001020304");
  const json d = datagram_to_json(bytes);
  ASSERT_EQ(d.at("messages").size(), 1u);
  const json& got = d.at("messages").at(0);
  EXPECT_EQ(got.at("service"), 4660);
  EXPECT_EQ(got.at("method"), 1057);
  EXPECT_EQ(got.at("length"), 12);
  EXPECT_EQ(got.at("protocol_version"), 1);  // defaulted
  EXPECT_EQ(got.at("message_type_name"), "REQUEST");
  EXPECT_EQ(got.at("payload"), "01020304");
  EXPECT_FALSE(d.contains("error"));
}

TEST(MessageJson, SdEntriesAndOptionsRoundTrip) {
  const json m = json::parse(R"({"service":65535,"method":33024,"session":7,"interface_version":1,"message_type":2,
    "sd":{"flags":192,"entries":[{"type":1,"index1":0,"num1":2,"service":4660,"instance":1,"major":1,"ttl":3,"minor":5},
                                 {"type":6,"index1":2,"num1":1,"service":4660,"instance":1,"major":1,"ttl":3,"eventgroup":16,"counter":2}],
          "options":[{"type":4,"address":"10.0.0.1","proto":17,"port":30509},{"type":1,"config":["a=b","c"]},
                     {"type":20,"address":"239.1.1.1","proto":17,"port":30600}]}})");
  const json sd = datagram_to_json(message_from_json(m)).at("messages").at(0).at("sd");
  EXPECT_EQ(sd.at("flags"), 192);
  EXPECT_EQ(sd.at("reboot"), true);
  ASSERT_EQ(sd.at("entries").size(), 2u);
  EXPECT_EQ(sd.at("entries").at(0).at("minor"), 5);
  EXPECT_EQ(sd.at("entries").at(1).at("eventgroup"), 16);
  EXPECT_EQ(sd.at("entries").at(1).at("counter"), 2);
  ASSERT_EQ(sd.at("options").size(), 3u);
  EXPECT_EQ(sd.at("options").at(0).at("address"), "10.0.0.1");
  EXPECT_EQ(sd.at("options").at(1).at("config"), json::array({"a=b", "c"}));
  EXPECT_EQ(sd.at("options").at(2).at("port"), 30600);
}

TEST(MessageJson, SeveralMessagesMakeOneDatagram) {
  const json j = json::parse(R"({"messages":[{"service":1,"payload":"aa"},{"service":2,"payload":""}]})");
  const auto d = datagrams_from_json(j);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].size(), 16u + 1 + 16);
  EXPECT_EQ(datagram_to_json(d[0]).at("messages").size(), 2u);
}

TEST(MessageJson, SegmentsReassembleToTheWholeMessage) {
  const std::string payload(3000 * 2, 'a');  // 3000 bytes of 0xaa
  const json j = {{"segment_size", 1392},
                  {"messages", json::array({{{"service", 4660}, {"method", 1057}, {"message_type", 0x80},
                                             {"payload", payload}}})}};
  const auto segments = datagrams_from_json(j);
  ASSERT_EQ(segments.size(), 3u);
  const json first = datagram_to_json(segments[0]).at("messages").at(0);
  EXPECT_EQ(first.at("tp").at("offset"), 0);
  EXPECT_EQ(first.at("tp").at("more"), true);
  const json r = reassemble_to_json(segments);
  EXPECT_EQ(r.at("status"), json::array({"incomplete", "incomplete", "complete"}));
  EXPECT_EQ(r.at("result").at("messages").at(0).at("payload"), payload);
  EXPECT_EQ(r.at("result").at("messages").at(0).at("message_type"), 0x80);
}

TEST(MessageJson, ReassemblerReportsDuplicatesAndNonTpMessages) {
  const json j = {{"segment_size", 16}, {"messages", json::array({{{"message_type", 0x80}, {"payload", std::string(40, 'b')}}})}};
  const auto segments = datagrams_from_json(j);
  ASSERT_EQ(segments.size(), 2u);
  const std::vector<std::vector<std::uint8_t>> in = {segments[0], segments[0], message_from_json({{"payload", "00"}})};
  const json r = reassemble_to_json(in);
  ASSERT_EQ(r.at("status").size(), 3u);
  EXPECT_EQ(r.at("status").at(0), "incomplete");
  EXPECT_EQ(r.at("status").at(1), "duplicate");
  EXPECT_NE(r.at("status").at(2), "complete");
  EXPECT_TRUE(r.at("result").is_null());
}

TEST(MessageJson, MalformedDatagramEndsWithError) {
  auto bytes = message_from_json({{"service", 1}, {"payload", "0102"}});
  const auto good = bytes;
  bytes.insert(bytes.end(), good.begin(), good.begin() + 6);  // a truncated second header
  const json d = datagram_to_json(bytes);
  EXPECT_EQ(d.at("messages").size(), 1u);
  EXPECT_TRUE(d.contains("error"));
}

TEST(MessageJson, LengthOverridePatchesTheLengthField) {
  const auto b = message_from_json({{"payload", "00"}, {"length_override", 100}});
  EXPECT_EQ(to_hex(std::span(b).subspan(4, 4)), "00000064");
}

TEST(MessageJson, BadInputThrowsWithAReason) {
  EXPECT_THROW((void)bytes_from_hex("zz"), std::runtime_error);
  try {
    (void)message_from_json({{"payload", "0g"}});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "bad hex: 0g");
  }
  EXPECT_THROW((void)message_from_json(json::parse(R"({"sd":{"options":[{"type":4,"address":"nope"}]}})")),
               std::runtime_error);
}

// Regression (fuzz/someip_json_fuzz.cc, corpus someip_json/regress_float_message_type):
// a float out of the field's range was converted with get<int>(), which is
// undefined behaviour; integer fields now refuse any non-integer number.
TEST(MessageJson, NonIntegerNumbersAreRefused) {
  EXPECT_THROW((void)message_from_json(json::parse(R"({"message_type": 3e85})")), std::runtime_error);
  EXPECT_THROW((void)message_from_json(json::parse(R"({"service": 1.5})")), std::runtime_error);
  EXPECT_THROW((void)message_from_json(json::parse(R"({"length_override": -1e300})")), std::runtime_error);
  EXPECT_THROW((void)datagrams_from_json(json::parse(R"({"segment_size": 1e30, "messages": [{}]})")),
               std::runtime_error);
  EXPECT_EQ(message_from_json(json::parse(R"({"message_type": 2})")).size(), 16u);
}

// Found by the fuzz campaign (libFuzzer out-of-memory, 2026-12-05): a huge
// segment_size made the encoder allocate a segment buffer of that size.
TEST(MessageJson, SegmentSizeIsBoundedBeforeAnythingIsAllocated) {
  const auto with = [](const std::string& size) {
    return json::parse(R"({"segment_size": )" + size +
                       R"(, "messages": [{"service": 31, "payload": ")" + std::string(36, '0') + R"("}]})");
  };
  for (const char* bad : {"19999999999", "65473", "15", "0"}) {
    try {
      (void)datagrams_from_json(with(bad));
      ADD_FAILURE() << "segment_size " << bad << " accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("segment_size: must be 16..65472"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(datagrams_from_json(with("65472")).size(), 1u);
  EXPECT_EQ(datagrams_from_json(with("16")).size(), 2u);  // 18 payload bytes: 16 + 2
}

}  // namespace
}  // namespace layersec::someip
