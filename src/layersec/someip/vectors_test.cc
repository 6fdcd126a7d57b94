// Wire vectors produced by an independent implementation (scapy), kept in
// testdata/someip/scapy_vectors.json: each must decode to the recorded field
// values and re-encode to the same bytes.
#include <gtest/gtest.h>

#include <vector>

#include "layersec/base/hex.h"
#include "layersec/someip/message.h"
#include "layersec/someip/sd_message.h"
#include "layersec/someip/tp.h"
#include "support/vectors.h"

namespace layersec::someip {
namespace {

TEST(SomeipVectors, ScapyBuiltMessagesDecodeAndReencode) {
  const auto doc = testing::load_testdata_json("someip/scapy_vectors.json");
  ASSERT_TRUE(doc.contains("vectors"));
  ASSERT_GE(doc["vectors"].size(), 4u);
  for (const auto& v : doc["vectors"]) {
    SCOPED_TRACE(v["name"].get<std::string>());
    ASSERT_TRUE(v.contains("source"));
    const auto bytes = testing::hex(v["hex"].get<std::string>());
    const auto& x = v["expect"];
    auto m = parse_message(bytes);
    ASSERT_TRUE(m.ok());
    const Header& h = m->header;
    EXPECT_EQ(h.service_id, x["service"].get<int>());
    EXPECT_EQ(h.method_id, x["method"].get<int>());
    EXPECT_EQ(h.client_id, x.value("client", 0));
    EXPECT_EQ(h.session_id, x["session"].get<int>());
    EXPECT_EQ(h.interface_version, x["interface_version"].get<int>());
    EXPECT_EQ(static_cast<int>(h.message_type), x["message_type"].get<int>());
    EXPECT_EQ(h.return_code, x["return_code"].get<int>());
    if (x.contains("payload")) {
      EXPECT_EQ(to_hex(m->payload), x["payload"].get<std::string>());
    }
    if (x.contains("tp_offset")) {
      auto s = parse_tp_segment(*m);
      ASSERT_TRUE(s.ok());
      EXPECT_EQ(s->offset, x["tp_offset"].get<std::uint32_t>());
      EXPECT_EQ(s->more_segments, x["tp_more"].get<bool>());
      EXPECT_EQ(to_hex(s->data), x["tp_data"].get<std::string>());
    }
    if (x.contains("entries")) {
      auto sd = parse_sd_message(*m);
      ASSERT_TRUE(sd.ok());
      EXPECT_EQ(sd->flags(), x["sd_flags"].get<int>());
      ASSERT_EQ(sd->entry_count(), x["entries"].size());
      std::vector<SdEntry> entries;
      for (std::size_t i = 0; i < sd->entry_count(); ++i) {
        const SdEntry e = sd->entry(i);
        const auto& xe = x["entries"][i];
        EXPECT_EQ(e.type, xe["type"].get<int>());
        EXPECT_EQ(e.service_id, xe["service"].get<int>());
        EXPECT_EQ(e.instance_id, xe["instance"].get<int>());
        EXPECT_EQ(e.major_version, xe["major"].get<int>());
        EXPECT_EQ(e.ttl, xe["ttl"].get<std::uint32_t>());
        EXPECT_EQ(e.index1, xe["index1"].get<int>());
        EXPECT_EQ(e.num_options1, xe["num1"].get<int>());
        if (xe.contains("minor")) {
          EXPECT_EQ(e.minor_version, xe["minor"].get<std::uint32_t>());
        }
        if (xe.contains("eventgroup")) {
          EXPECT_EQ(e.eventgroup_id, xe["eventgroup"].get<int>());
          EXPECT_EQ(e.counter, xe["counter"].get<int>());
        }
        entries.push_back(e);
      }
      std::vector<SdOption> options;
      ASSERT_EQ(sd->option_count(), x["options"].size());
      for (std::size_t i = 0; i < sd->option_count(); ++i) {
        const SdOption o = sd->option(i);
        const auto& xo = x["options"][i];
        EXPECT_EQ(o.type, xo["type"].get<int>());
        EXPECT_EQ(o.endpoint.address.to_string(), xo["address"].get<std::string>());
        EXPECT_EQ(static_cast<int>(o.endpoint.proto), xo["proto"].get<int>());
        EXPECT_EQ(o.endpoint.port, xo["port"].get<int>());
        options.push_back(o);
      }
      // Re-encode the SD payload: byte-identical to scapy's.
      std::vector<std::uint8_t> buf(m->payload.size());
      ByteWriter w(buf);
      ASSERT_TRUE(write_sd_payload(w, sd->flags(), entries, options));
      EXPECT_EQ(to_hex(w.written()), to_hex(m->payload));
    }
    // Header re-encodes byte-identically.
    std::vector<std::uint8_t> out(bytes.size());
    ByteWriter w(out);
    ASSERT_TRUE(write_message(w, h, m->payload));
    EXPECT_EQ(to_hex(out), to_hex(bytes));
  }
}

}  // namespace
}  // namespace layersec::someip
