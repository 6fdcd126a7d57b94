#include "layersec/someip/json_service_table.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "layersec/someip/message_json.h"

namespace layersec::someip {
namespace {

using nlohmann::json;

const JsonServiceTable& table() {
  static const JsonServiceTable t(json::parse(R"({"services":[{"id":4660,"major":2,"methods":{"1":"rr","2":"ff"}},{"id":5}]})"));
  return t;
}

json verdict_for(const json& message) {
  const json v = server_verdicts_json(table(), message_from_json(message)).at("verdicts");
  EXPECT_EQ(v.size(), 1u);
  return v.at(0);
}

TEST(JsonServiceTable, DescribesServicesAndMethods) {
  EXPECT_TRUE(table().has_service(4660));
  EXPECT_TRUE(table().has_service(5));
  EXPECT_FALSE(table().has_service(6));
  EXPECT_EQ(table().interface_version(4660), 2);
  EXPECT_EQ(table().interface_version(5), 1);  // default major
  EXPECT_EQ(table().interface_version(6), 0);
  EXPECT_EQ(table().method(4660, 1), MethodKind::kRequestResponse);
  EXPECT_EQ(table().method(4660, 2), MethodKind::kFireAndForget);
  EXPECT_EQ(table().method(4660, 3), MethodKind::kNone);
  EXPECT_EQ(table().method(5, 1), MethodKind::kNone);
}

TEST(JsonServiceTable, KnownRequestIsDelivered) {
  const json v = verdict_for({{"service", 4660}, {"method", 1}, {"interface_version", 2}, {"message_type", 0}});
  EXPECT_EQ(v.at("action"), "deliver");
  EXPECT_FALSE(v.contains("response"));
}

TEST(JsonServiceTable, UnknownMethodGetsAnErrorResponse) {
  const json v = verdict_for({{"service", 4660}, {"method", 9}, {"client", 16}, {"session", 5},
                              {"interface_version", 2}, {"message_type", 0}});
  EXPECT_EQ(v.at("action"), "reply-error");
  EXPECT_EQ(v.at("return_code"), 0x03);
  // Same message and request id, ERROR (0x81), E_UNKNOWN_METHOD, no payload.
  EXPECT_EQ(v.at("response"), "1234000900000008001000050102810" "3");
}

TEST(JsonServiceTable, ResponsesAtAServerAreDropped) {
  const json v = verdict_for({{"service", 4660}, {"method", 1}, {"interface_version", 2}, {"message_type", 0x80}});
  EXPECT_EQ(v.at("action"), "drop");
}

TEST(JsonServiceTable, FramingErrorEndsTheVerdicts) {
  auto bytes = message_from_json({{"service", 4660}, {"method", 1}, {"interface_version", 2}, {"message_type", 0}});
  bytes.insert(bytes.end(), {0x12, 0x34, 0x00});  // a truncated header
  const json v = server_verdicts_json(table(), bytes).at("verdicts");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v.at(0).at("action"), "deliver");
  EXPECT_EQ(v.at(1).at("action"), "drop");
}

// Regression (fuzz/someip_json_fuzz.cc, corpus someip_json/regress_float_service_id):
// a floating-point "id" or "major" out of range was converted with get<>(),
// undefined behaviour; a non-integer id now matches no service and a
// non-integer major throws.
TEST(JsonServiceTable, NonIntegerNumbersAreNotConverted) {
  const JsonServiceTable t(json::parse(R"({"services":[{"id":4.6e110},{"id":4660,"major":3e85}]})"));
  EXPECT_FALSE(t.has_service(0));
  EXPECT_TRUE(t.has_service(4660));
  EXPECT_THROW((void)t.interface_version(4660), std::runtime_error);
}

}  // namespace
}  // namespace layersec::someip
