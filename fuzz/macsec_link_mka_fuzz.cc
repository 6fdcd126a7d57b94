// Fuzz target: the MKA file of a MACsec link (macsec/link_mka_config.h,
// `layersec macsec up --mka`): CAK file, CKN, priority, cipher suite, SecY
// settings, timers. The key files cak16, cak32 and short8 exist in a private
// temporary directory used as the configuration's directory. Property: every
// input is refused with LinkConfigError, or it yields a configuration that
// runs: the SecY of link_config_for_mka() builds, a participant over it (the
// CAK, CKN and timers as parsed) constructs without an exception, and its
// first MKPDU decodes and verifies. Anything else (another exception, a
// crash, a sanitizer report) is a finding. No serialiser: no round trip.
#include <cstdint>

#include "fuzz_support.h"
#include "layersec/macsec/link_mka_config.h"
#include "layersec/macsec/secy.h"
#include "layersec/mka/keys.h"
#include "layersec/mka/mkpdu.h"
#include "layersec/mka/participant.h"
#include "layersec/mka/gated_secy_driver.h"

using namespace layersec;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::KeyDir keys({{"cak16", 16}, {"cak32", 32}, {"short8", 8}});
  const auto j = fuzz::json_of(data, size);
  if (!j) return 0;
  macsec::LinkMkaConfig c;
  try {
    c = macsec::parse_link_mka_config(*j, keys.path());
  } catch (const macsec::LinkConfigError&) {
    return 0;
  }
  fuzz::require(c.cak.size() == 16 || c.cak.size() == 32);
  macsec::LinkConfig lc = macsec::link_config_for_mka(c);
  const std::uint8_t mac[6] = {0x02, 0, 0, 0, 0, 1};
  macsec::SecYConfig sc = lc.secy;
  sc.sci = macsec::Sci::from_parts(mac, c.port);
  macsec::SecY secy(sc);  // throws only for settings the parser must have refused
  mka::GatedSecYDriver adapter(secy);
  mka::SystemRandom rng;
  mka::ParticipantConfig pc = c.participant;
  pc.sci = sc.sci.value;
  mka::Participant p(pc, c.cak.clone(), adapter, rng);
  const mka::Output out = p.start(TimePoint::from_ns(1'000'000'000));
  fuzz::require(out.frames.size() == 1);
  auto d = mka::decode_mkpdu(out.frames[0]);
  fuzz::require(d.ok());
  fuzz::require(d->mkpdu.basic.ckn == pc.ckn);
  fuzz::require(d->mkpdu.basic.key_server_priority == pc.key_server_priority);
  return 0;
}
