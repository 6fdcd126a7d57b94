// The SV counter floor file (floor_file.h): 0600, symlinks refused, typed
// parse errors naming the line, atomic rewrite, a restarted subscriber on it.
#include "layersec/sv_io/floor_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "layersec/base/keyfile.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/subscriber.h"
#include "support/vectors.h"

namespace layersec::sv_io {
namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/layersec-floor-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    if (d == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = d;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  [[nodiscard]] std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::string& path, const std::string& text) {
  ASSERT_TRUE(write_key_file(path, ByteSpan(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), true)
                  .ok());
}

const sv::FloorKey kKey{0x4000, "LAYERSEC01"};

TEST(SvFloorFile, CreateSaveOpenRoundTripMode0600) {
  TempDir dir;
  const std::string path = dir.file("floor");
  auto created = FileFloorStore::create(path);
  ASSERT_TRUE(created.ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(created->load(kKey).value().has_value());
  ASSERT_TRUE(created->save(kKey, 1'780'000'000'000'012'345ULL).ok());
  ASSERT_TRUE(created->save(sv::FloorKey{0x0001, ""}, 0).ok());
  ASSERT_TRUE(created->save(kKey, 1'780'000'000'000'099'999ULL).ok());
  EXPECT_EQ(created->saves(), 3u);
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto opened = FileFloorStore::open(path);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->load(kKey).value(), 1'780'000'000'000'099'999ULL);
  EXPECT_EQ(opened->load(sv::FloorKey{0x0001, ""}).value(), 0u);
  EXPECT_FALSE(opened->load(sv::FloorKey{0x4000, "OTHER"}).value().has_value());
  EXPECT_EQ(opened->records(), created->records());
  // The text is what serialize_floor_state writes, and parses back.
  const std::string text = slurp(path);
  EXPECT_EQ(text, serialize_floor_state(created->records()));
  EXPECT_NE(text.find("stream 4000 4c415945525345433031 1780000000000099999\n"), std::string::npos) << text;
  EXPECT_NE(text.find("stream 0001 - 0\n"), std::string::npos) << text;
  auto parsed = parse_floor_state(text);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, created->records());
}

// The fuzz seed with a checksum parses, so the fuzzer's round trip starts
// from a valid file (fuzz/sv_floor_fuzz.cc).
TEST(SvFloorFile, TheFuzzSeedParses) {
  const std::string text = slurp((layersec::testing::source_dir() / "fuzz/corpus/sv_floor/file.txt").string());
  auto r = parse_floor_state(text);
  ASSERT_TRUE(r.ok()) << text;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].key, kKey);
  EXPECT_EQ((*r)[0].resume, 1'780'000'000'000'012'345ULL);
  EXPECT_EQ(serialize_floor_state(*r), text);
}

TEST(SvFloorFile, CreateRefusesAnythingAtThePath) {
  TempDir dir;
  const std::string path = dir.file("floor");
  ASSERT_TRUE(FileFloorStore::create(path).ok());
  std::string detail;
  auto again = FileFloorStore::create(path, &detail);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error(), FloorFileError::kExists);
  EXPECT_NE(detail.find(path), std::string::npos);
}

TEST(SvFloorFile, SymlinksAreRefusedAndNeverWrittenThrough) {
  TempDir dir;
  const std::string target = dir.file("target");
  const std::string link = dir.file("link");
  {
    std::ofstream(target) << "precious\n";
  }
  ::chmod(target.c_str(), 0600);
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  auto o = FileFloorStore::open(link);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error(), FloorFileError::kSymlink);
  auto c = FileFloorStore::create(link);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error(), FloorFileError::kSymlink);
  EXPECT_EQ(slurp(target), "precious\n");
}

TEST(SvFloorFile, InsecureMissingAndNonRegularFilesAreTyped) {
  TempDir dir;
  const std::string path = dir.file("floor");
  auto missing = FileFloorStore::open(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), FloorFileError::kMissing);
  ASSERT_TRUE(FileFloorStore::create(path).ok());
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  std::string detail;
  auto open = FileFloorStore::open(path, &detail);
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.error(), FloorFileError::kInsecure);
  EXPECT_NE(detail.find(path), std::string::npos) << detail;
  const std::string sub = dir.file("dir");
  ASSERT_EQ(::mkdir(sub.c_str(), 0700), 0);
  auto d = FileFloorStore::open(sub);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error(), FloorFileError::kInsecure);
}

TEST(SvFloorFile, BadContentIsATypedErrorNamingTheLine) {
  const std::string good = serialize_floor_state({FloorRecord{kKey, 42}, FloorRecord{sv::FloorKey{1, "x"}, 7}});
  ASSERT_TRUE(parse_floor_state(good).ok());
  struct Case {
    std::string text;
    FloorSyntax what;
    std::size_t line;
  };
  const std::string magic = "layersec-sv-floor 1\n";
  const std::string sum_line = good.substr(good.rfind("end "));
  const std::vector<Case> cases = {
      {"", FloorSyntax::kNoMagic, 1},
      {"layersec-sv-floor 2\n", FloorSyntax::kNoMagic, 1},
      {magic.substr(0, magic.size() - 1), FloorSyntax::kNoNewline, 1},
      {magic + "stream 4000 4c 1\n", FloorSyntax::kNoChecksum, 3},
      {magic + "strem 4000 4c 1\n" + sum_line, FloorSyntax::kBadRecord, 2},
      {magic + "stream 4000 4c 1 2\n" + sum_line, FloorSyntax::kBadRecord, 2},
      {magic + "stream 40000 4c 1\n" + sum_line, FloorSyntax::kBadAppid, 2},
      {magic + "stream 4G00 4c 1\n" + sum_line, FloorSyntax::kBadAppid, 2},
      {magic + "stream 4000 4C 1\n" + sum_line, FloorSyntax::kBadSvId, 2},
      {magic + "stream 4000 4c4 1\n" + sum_line, FloorSyntax::kBadSvId, 2},
      {magic + "stream 4000 4c -1\n" + sum_line, FloorSyntax::kBadResume, 2},
      {magic + "stream 4000 4c 01\n" + sum_line, FloorSyntax::kBadResume, 2},
      {magic + "stream 4000 4c 18446744073709551616\n" + sum_line, FloorSyntax::kBadResume, 2},
      {magic + "stream 4000 4c 1\nstream 4000 4c 2\n" + sum_line, FloorSyntax::kDuplicate, 3},
      {magic + "stream 4000 4c 1\n" + sum_line, FloorSyntax::kBadChecksum, 3},
      {good + "stream 4000 4c 1\n", FloorSyntax::kAfterEnd, 5},
      {good.substr(0, good.size() - 1), FloorSyntax::kNoNewline, 4},
  };
  for (const Case& c : cases) {
    std::size_t line = 0;
    auto r = parse_floor_state(c.text, &line);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error(), c.what) << c.text;
    EXPECT_EQ(line, c.line) << c.text;
    const std::string msg = floor_syntax_message(r.error(), line);
    EXPECT_EQ(msg.rfind("line " + std::to_string(c.line) + ": ", 0), 0u) << msg;
  }
  // One changed digit breaks the checksum (a hand-edited floor is refused).
  std::string edited = good;
  edited[edited.find(" 42\n") + 1] = '9';
  auto e = parse_floor_state(edited);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error(), FloorSyntax::kBadChecksum);
  // Through the file: kCorrupt, the detail names the path and the line.
  TempDir dir;
  const std::string path = dir.file("floor");
  write_text(path, magic + "stream 4000 zz 1\n" + sum_line);
  std::string detail;
  auto o = FileFloorStore::open(path, &detail);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error(), FloorFileError::kCorrupt);
  EXPECT_NE(detail.find(path), std::string::npos) << detail;
  EXPECT_NE(detail.find("line 2: svID"), std::string::npos) << detail;
}

TEST(SvFloorFile, AFailedWriteIsReportedAndTheStoreKeepsTheFileState) {
  TempDir dir;
  const std::string path = dir.file("floor");
  auto store = FileFloorStore::create(path);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->save(kKey, 100).ok());
  // Something that cannot be renamed over: the path becomes a directory.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  auto st = store->save(kKey, 200);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), sv::FloorStoreError::kIo);
  EXPECT_NE(store->last_error().find(path), std::string::npos) << store->last_error();
  EXPECT_EQ(store->load(kKey).value(), 100u);
  EXPECT_EQ(store->saves(), 1u);
}

TEST(SvFloorFile, ARestartedSubscriberOnTheFileRefusesTheRecording) {
  TempDir dir;
  const std::string path = dir.file("floor");
  const sv::Profile p = *sv::find_profile("4000/1");
  sv::StreamConfig pc;
  pc.security = *sv::parse_scheme("hmac-sha256");
  pc.security.sender_id = pc.appid;
  sv::SubscriptionConfig sc;
  sc.sv_id = pc.sv_id;
  sc.smp_cnt_wrap = p.smp_cnt_wrap();
  sc.security = pc.security;
  const auto key = [&](std::uint64_t initial) {
    sv::KeyMaterial k;
    k.key_id = 3;
    k.key = SecretBytes(sv::key_bytes_for(pc.security.scheme));
    for (std::size_t i = 0; i < k.key.size(); ++i) k.key[i] = static_cast<std::uint8_t>(i * 11);
    k.initial_counter = initial;
    return k;
  };
  sv::Publisher pub(pc, p, TimePoint{}, key(5'000'000));
  std::vector<std::vector<std::uint8_t>> recorded;
  std::vector<sv::Sample> samples(8);
  {
    auto store = FileFloorStore::create(path);
    ASSERT_TRUE(store.ok());
    sv::Subscriber sub;
    const auto id = sub.add_stream(sc, key(0));
    ASSERT_TRUE(sub.set_floor_store(&*store, 64, sv::FloorStart::kFirstStart).ok());
    for (int k = 0; k < 100; ++k) {
      auto f = pub.build_next(samples);
      ASSERT_TRUE(f.ok());
      recorded.emplace_back(f->begin(), f->end());
      ASSERT_TRUE(sub.on_frame(recorded.back(), TimePoint{}).ok());
    }
    EXPECT_EQ(sub.counters(id).floor_saves, 2u);  // counters 5,000,000 and 5,000,064
  }  // killed
  auto store = FileFloorStore::open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(store->load(sv::FloorKey{sc.appid, sc.sv_id}).value(), 5'000'128u);
  sv::Subscriber sub;
  const auto id = sub.add_stream(sc, key(0));
  ASSERT_TRUE(sub.set_floor_store(&*store, 64, sv::FloorStart::kResume).ok());
  for (const auto& r : recorded) EXPECT_FALSE(sub.on_frame(r, TimePoint{}).ok());
  EXPECT_EQ(sub.counters(id).replayed_counter, recorded.size());
  EXPECT_EQ(sub.counters(id).delivered, 0u);
  // A deleted file: the next start fails closed (the CLI needs --first-start).
  ASSERT_EQ(::unlink(path.c_str()), 0);
  auto gone = FileFloorStore::open(path);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error(), FloorFileError::kMissing);
}

}  // namespace
}  // namespace layersec::sv_io
