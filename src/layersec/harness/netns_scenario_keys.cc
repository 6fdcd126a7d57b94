// Key material of the netns scenario sweep (netns_scenario_keys.h).
#include "layersec/harness/netns_scenario_keys.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include "layersec/base/keyfile.h"
#include "layersec/crypto/kdf.h"
#include "layersec/harness/netns_node_spec.h"
#include "layersec/keymgmt/wire.h"
#include "layersec/kex/pki.h"

namespace layersec::harness {

namespace fs = std::filesystem;

std::vector<std::uint16_t> netns_certificate_services() {
  std::vector<std::uint16_t> s = {kNetnsScenarioService, keymgmt::kDefaultServiceId};
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

NetnsKeyFiles write_netns_psk_files(const std::string& dir) {
  NetnsKeyFiles files;
  auto write = [&](const std::string& name, std::size_t size) {
    const std::string path = (fs::path(dir) / name).string();
    const SecretBytes key = crypto::random_key(size);
    auto st = write_key_file_hex(path, key.span(), /*overwrite=*/true);
    if (!st.ok()) throw std::runtime_error("cannot write " + path + ": " + std::string(to_string(st.error())));
    return path;
  };
  files.secoc_key = write("secoc-psk.key", 32);
  files.macsec_key = write("macsec-sak.key", 16);
  return files;
}

void write_netns_rsa_files(const std::string& dir, int subscribers, NetnsKeyFiles& files) {
  auto fail = [](const std::string& what, kex::PkiError e) {
    throw std::runtime_error("RSA provisioning: " + what + ": " + std::string(kex::to_string(e)));
  };
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  auto ca = kex::create_ca({"layersec-netns-ca", kex::CaKind::kVehicle, kex::KeyAlgorithm::kEcdsaP256,
                            kex::Validity::days_from(now, 30)});
  if (!ca.ok()) fail("CA", ca.error());
  files.ca_cert = (fs::path(dir) / "ca.pem").string();
  if (auto st = ca->certificate.save(files.ca_cert, true); !st.ok()) fail(files.ca_cert, st.error());
  files.certs.clear();
  files.keys.clear();
  for (int k = 0; k <= subscribers; ++k) {
    const std::string name = k == 0 ? "publisher" : "subscriber-" + std::to_string(k - 1);
    auto id = kex::issue_certificate(
        *ca, {"netns-" + name, netns_certificate_services(), kex::KeyAlgorithm::kRsa2048,
              kex::Validity::days_from(now, 30)});
    if (!id.ok()) fail(name + " certificate", id.error());
    const std::string cert = (fs::path(dir) / (name + ".pem")).string();
    const std::string key = (fs::path(dir) / (name + ".key")).string();
    if (auto st = id->certificate.save(cert, true); !st.ok()) fail(cert, st.error());
    if (auto st = id->key.save(key, nullptr, true); !st.ok()) fail(key, st.error());
    files.certs.push_back(cert);
    files.keys.push_back(key);
  }
}

}  // namespace layersec::harness
