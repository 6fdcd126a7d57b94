// Tests of `macsec protect|validate` as library calls (frame_tool.h): a
// frame protected with a static SA from a 0600 key file validates with the
// same SA, a tampered frame is dropped, a key file group or others can read
// is refused, and nothing printed carries key material.
#include "layersec/macsec/frame_tool.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "layersec/base/keyfile.h"

namespace layersec::macsec {
namespace {

namespace fs = std::filesystem;

class FrameToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ls_frametool_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    key_ = (dir_ / "sak").string();
    ASSERT_TRUE(write_key_file_hex(key_, std::vector<std::uint8_t>(16, 0xab), /*overwrite=*/true).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  StaticSaOptions options(const std::string& frame) const {
    StaticSaOptions o;
    o.key_file = key_;
    o.an = 1;
    o.pn = 7;
    o.frames = {frame};
    return o;
  }

  fs::path dir_;
  std::string key_;
};

const std::string kPlain = "ffffffffffff021122334455080045000014000000004011000000000000";

TEST_F(FrameToolTest, ProtectedFrameValidates) {
  std::ostringstream out, err;
  protect_static_frames(options(kPlain), out, err);
  EXPECT_EQ(err.str().rfind("macsec protect: GCM-AES-128 key id ", 0), 0u) << err.str();
  EXPECT_NE(err.str().find(" AN 1 first PN 7\n"), std::string::npos);
  std::string secure = out.str();
  ASSERT_FALSE(secure.empty());
  secure.pop_back();  // the newline
  EXPECT_EQ(secure.substr(24, 4), "88e5");

  std::ostringstream vout, verr;
  StaticSaOptions v = options(secure);
  v.stats = true;
  EXPECT_TRUE(validate_static_frames(v, vout, verr));
  EXPECT_EQ(vout.str(), "verified " + kPlain + " 1 7\n");
  EXPECT_NE(verr.str().find("validateFrames Strict"), std::string::npos) << verr.str();
  EXPECT_NE(verr.str().find("  InPktsOK 1\n"), std::string::npos) << verr.str();
  EXPECT_EQ((err.str() + verr.str()).find("abababab"), std::string::npos);  // no key bytes

  secure[secure.size() - 1] = secure.back() == '0' ? '1' : '0';  // flip an ICV bit
  std::ostringstream tout, terr;
  EXPECT_FALSE(validate_static_frames(options(secure), tout, terr));
  EXPECT_EQ(tout.str().rfind("dropped ", 0), 0u) << tout.str();
}

TEST_F(FrameToolTest, KeyFileOthersCanReadIsRefused) {
  ASSERT_EQ(::chmod(key_.c_str(), 0644), 0);
  std::ostringstream out, err;
  try {
    protect_static_frames(options(kPlain), out, err);
    FAIL() << "a 0644 key file was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--key-file: ", 0), 0u) << e.what();
  }
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "");
}

TEST_F(FrameToolTest, WrongSakSizeNamesTheSuite) {
  try {
    (void)load_static_sak(key_, CipherSuite::kGcmAes256);
    FAIL() << "a 16-octet SAK was accepted for GCM-AES-256";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("(GCM-AES-256 needs a 32-octet SAK)"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)load_static_sak("", CipherSuite::kGcmAes128), std::runtime_error);
}

}  // namespace
}  // namespace layersec::macsec
