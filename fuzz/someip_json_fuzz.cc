// Fuzz target: the SOME/IP JSON codec of `layersec someip decode|encode`
// (someip/message_json.h) and the JSON service table of `someip respond`
// (someip/json_service_table.h). The first byte picks the mode:
//  - even: the rest is a datagram. datagram_to_json(x) is parse; when every
//    message decoded (no "error", "tp_error", "sd_error"),
//    datagrams_from_json re-serialises it without throwing, and the result
//    decodes to the same JSON (parse(serialise(parse(x))) == parse(x));
//  - odd: the rest is JSON text given to datagrams_from_json (encode) and to
//    the service table with server_verdicts_json over a fixed datagram;
//    errors are std::exception (runtime_error naming the problem or a JSON
//    type error), never a crash.
#include <cstdint>
#include <exception>
#include <vector>

#include "fuzz_support.h"
#include "layersec/someip/json_service_table.h"
#include "layersec/someip/message_json.h"

using namespace layersec;
using layersec::fuzz::require;

namespace {

bool fully_decoded(const nlohmann::json& j) {
  if (j.contains("error")) return false;
  for (const auto& m : j.at("messages"))
    if (m.contains("tp_error") || m.contains("sd_error")) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const ByteSpan rest(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    const nlohmann::json once = someip::datagram_to_json(rest);
    if (!fully_decoded(once) || once.at("messages").empty()) return 0;
    std::vector<std::vector<std::uint8_t>> again;
    try {
      again = someip::datagrams_from_json(once);
    } catch (const std::exception&) {
      std::abort();  // the decoder's own output is refused by the encoder
    }
    require(again.size() == 1);
    require(someip::datagram_to_json(again[0]) == once);
    return 0;
  }
  const auto j = fuzz::json_of(rest.data(), rest.size());
  if (!j) return 0;
  try {
    for (const auto& d : someip::datagrams_from_json(*j)) (void)someip::datagram_to_json(d);
  } catch (const std::exception&) {
  }
  try {
    // A request to service 0x1234 method 0x0001 (client 1, session 1).
    static const std::vector<std::uint8_t> request = {0x12, 0x34, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09,
                                                      0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x00, 0x00, 0xAA};
    const someip::JsonServiceTable table(*j);
    (void)someip::server_verdicts_json(table, request);
  } catch (const std::exception&) {
  }
  return 0;
}
