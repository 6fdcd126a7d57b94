#include "layersec/sv_io/report_json.h"

namespace layersec::sv_io {

nlohmann::json counters_json(const sv::StreamCounters& c) {
  return nlohmann::json{{"received", c.received},
                        {"delivered", c.delivered},
                        {"gaps", c.gaps},
                        {"missing_samples", c.missing_samples},
                        {"duplicates", c.duplicates},
                        {"stale", c.stale},
                        {"replays", c.replays},
                        {"bad_tag", c.bad_tag},
                        {"unknown_key", c.unknown_key},
                        {"bad_extension", c.bad_extension},
                        {"unexpected_extension", c.unexpected_extension},
                        {"invariant_mismatch", c.invariant_mismatch},
                        {"conf_rev_changes", c.conf_rev_changes},
                        {"simulated", c.simulated},
                        {"timeouts", c.timeouts},
                        {"wrong_no_asdu", c.wrong_no_asdu},
                        {"wrong_dataset", c.wrong_dataset},
                        {"wrong_sv_id", c.wrong_sv_id},
                        {"bad_smp_cnt", c.bad_smp_cnt},
                        {"replayed_counter", c.replayed_counter},
                        {"smp_cnt_resyncs", c.smp_cnt_resyncs},
                        {"key_changes", c.key_changes},
                        {"floor_not_persisted", c.floor_not_persisted},
                        {"floor_saves", c.floor_saves}};
}

}  // namespace layersec::sv_io
