#include "layersec/someip/json_service_table.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "layersec/base/hex.h"
#include "layersec/someip/message.h"

namespace layersec::someip {
namespace {

using nlohmann::json;

std::string_view action_name(RxAction a) {
  switch (a) {
    case RxAction::kDeliver: return "deliver";
    case RxAction::kReplyError: return "reply-error";
    case RxAction::kDrop: return "drop";
  }
  return "?";
}

}  // namespace

bool JsonServiceTable::has_service(std::uint16_t s) const { return find(s) != nullptr; }

std::uint8_t JsonServiceTable::interface_version(std::uint16_t s) const {
  const json* e = find(s);
  if (!e) return 0;
  const auto it = e->find("major");
  if (it == e->end()) return 1;
  // get<>() on a floating-point number out of range is undefined behaviour.
  if (!it->is_number_integer()) throw std::runtime_error("major: expected an integer");
  return it->get<std::uint8_t>();
}

MethodKind JsonServiceTable::method(std::uint16_t s, std::uint16_t m) const {
  const json* e = find(s);
  if (!e || !e->contains("methods")) return MethodKind::kNone;
  const auto key = std::to_string(m);
  if (!e->at("methods").contains(key)) return MethodKind::kNone;
  return e->at("methods").at(key).get<std::string>() == "ff" ? MethodKind::kFireAndForget
                                                            : MethodKind::kRequestResponse;
}

const json* JsonServiceTable::find(std::uint16_t s) const {
  for (const auto& e : j_.at("services"))
    if (const json& id = e.at("id"); id.is_number_integer() && id.get<std::int64_t>() == s) return &e;
  return nullptr;
}

json server_verdicts_json(const ServiceTable& table, ByteSpan d) {
  json verdicts = json::array();
  auto add = [&](const RxVerdict& v, const Header* h) {
    json j{{"action", std::string(action_name(v.action))}, {"reason", std::string(to_string(v.reason))}};
    if (v.action == RxAction::kReplyError && h != nullptr) {
      std::uint8_t buf[kHeaderSize];
      ByteWriter w(buf);
      if (write_error_response(w, *h, v.code)) j["response"] = to_hex(w.written());
      j["return_code"] = static_cast<int>(v.code);
    }
    verdicts.push_back(j);
  };
  DatagramIterator it(d);
  std::size_t consumed = 0;
  while (!it.done()) {
    auto m = it.next();
    if (!m) {
      const ByteSpan rest = d.subspan(consumed);
      const RxVerdict v = check_malformed(rest, m.error());
      auto h = read_raw_header(rest);
      add(v, h ? &*h : nullptr);
      break;
    }
    consumed += m->bytes.size();
    add(check_server_message(m->header, table), &m->header);
  }
  return json{{"verdicts", verdicts}};
}

}  // namespace layersec::someip
