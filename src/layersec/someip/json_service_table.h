// The server-side error policy (error.h) driven from JSON, for the interop
// tests (`layersec someip respond`): a ServiceTable described as JSON and the
// verdict of every message of a datagram, with the ERROR response a server
// would send (feat_req_someip_371).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "layersec/base/bytes.h"
#include "layersec/someip/error.h"

namespace layersec::someip {

// A ServiceTable from {"services":[{"id":N,"major":N,"methods":{"1":"rr","2":"ff"}}]}:
// "ff" is fire-and-forget, any other kind request/response; "major"
// defaults to 1. The JSON is copied. Lookups throw nlohmann::json
// exceptions if the table lacks "services" or an entry's "id".
class JsonServiceTable final : public ServiceTable {
 public:
  explicit JsonServiceTable(nlohmann::json table) : j_(std::move(table)) {}
  [[nodiscard]] bool has_service(std::uint16_t s) const override;
  [[nodiscard]] std::uint8_t interface_version(std::uint16_t s) const override;
  [[nodiscard]] MethodKind method(std::uint16_t s, std::uint16_t m) const override;

 private:
  [[nodiscard]] const nlohmann::json* find(std::uint16_t s) const;
  nlohmann::json j_;
};

// {"verdicts":[{"action":"deliver"|"reply-error"|"drop","reason":DropReason,
// and for reply-error "return_code" and "response" (hex ERROR message)}]},
// one per message of `datagram`; a framing error ends the list with the
// verdict for the rest of the datagram (check_malformed).
[[nodiscard]] nlohmann::json server_verdicts_json(const ServiceTable& table, ByteSpan datagram);

}  // namespace layersec::someip
