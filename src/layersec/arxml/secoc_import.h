// The AUTOSAR SecOC module's ECU configuration (ECUC) read into layersec's
// SecOC engine terms (docs/arxml.md has the whole mapping):
//   SecOCTxPduProcessing / SecOCRxPduProcessing   -> txPdus / rxPdus
//   SecOCDataId                                    -> dataId
//   SecOCFreshnessValueLength                      -> freshnessValueLength
//   SecOCFreshnessValueTxLength (R4.2) or
//   SecOCFreshnessValueTruncLength (R4.3+)         -> freshnessValueTxLength
//   SecOCAuthInfoTxLength (R4.2) or
//   SecOCAuthInfoTruncLength (R4.3+)               -> authInfoTxLength
//   SecOCAuthPduHeaderLength                       -> authPduHeaderLength
//   SecOCSecuredTx/RxPduOffset, ...Length          -> securedAreaOffset / Length
//   SecOCAuthenticationVerifyAttempts              -> authenticationVerifyAttempts
//   SecOCRxAcceptanceWindow                        -> window
//   SecOCUseFreshnessTimestamp                     -> "freshness": "timestamp"
//   SecOCTx/RxAuthServiceConfigRef -> Csm job      -> key group: the job's CsmKey
//     (CsmKeyId = keyId, or SecOCKeyId), the algorithm from the job's
//     CsmMacGenerate/VerifyConfig (AES+CMAC with a 16 or 32 byte key,
//     SHA2_256+HMAC)
//   SecOCTx/RxSecuredLayerPduRef -> EcuC Pdu -> SysTPduToPduTriggeringRef
//     -> PDU-TRIGGERING <- SOCKET-CONNECTION-IPDU-IDENTIFIER/HEADER-ID: the
//     SOME/IP Message ID (service << 16 | method or event) the PDU protects.
// Parameters with no effect on the wire here are ignored and listed in the
// notes; any other parameter or sub-container is refused with its path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/arxml/document.h"

namespace layersec::arxml {

struct SecocPdu {
  bool tx = false;
  std::string path;        // ARXML path of the Tx/RxPduProcessing container
  nlohmann::json entry;    // the engine's txPdus/rxPdus entry, without "id"
  std::string key_group;   // name in SecocImport::groups
  bool counter_freshness = false;  // needs a sync channel
  std::optional<std::uint32_t> message_id;  // SOME/IP Message ID, when linked
};

struct SecocKeyGroup {
  std::string name;       // the CsmKey's SHORT-NAME (or "key<id>")
  std::string algorithm;  // engine name: cmac-aes128, cmac-aes256, hmac-sha256
  std::uint32_t key_id = 1;
  std::string path;       // where it was defined (for errors)
};

struct SecocImport {
  bool present = false;   // the file has a SecOC module configuration
  std::vector<SecocPdu> pdus;  // Tx then Rx, each in document order
  std::vector<SecocKeyGroup> groups;
  std::vector<ImportNote> notes;
};

// Throws ArxmlError naming the ARXML path of the first unsupported or
// invalid value.
[[nodiscard]] SecocImport import_secoc(const Document& d);

}  // namespace layersec::arxml
