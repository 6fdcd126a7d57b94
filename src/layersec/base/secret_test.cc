// Tests for SecretBytes and secure_zero (secret.h).
#include "layersec/base/secret.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

// Test hook: SecretBytes allocates with new[] and frees with delete[]. This
// test binary replaces the global array allocation functions (a replacement
// the C++ standard allows, [new.delete.array]) so that, for one watched
// buffer, the bytes it holds at the moment it is handed back are recorded:
// they must already be zero.
namespace {
const void* g_watched = nullptr;
std::size_t g_watched_len = 0;
bool g_watched_freed = false;
bool g_watched_was_zero = false;

void inspect_before_free(void* p) {
  if (p == nullptr || p != g_watched) return;
  const auto* b = static_cast<const unsigned char*>(p);
  bool zero = true;
  for (std::size_t i = 0; i < g_watched_len; ++i) zero = zero && b[i] == 0;
  g_watched_was_zero = zero;
  g_watched_freed = true;
  g_watched = nullptr;
}
}  // namespace

void* operator new[](std::size_t n) {
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete[](void* p) noexcept {
  inspect_before_free(p);
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  inspect_before_free(p);
  std::free(p);
}

namespace layersec {
namespace {

void watch(const SecretBytes& s) {
  g_watched = s.data();
  g_watched_len = s.size();
  g_watched_freed = false;
  g_watched_was_zero = false;
}

static_assert(!std::is_copy_constructible_v<SecretBytes>, "keys are never copied implicitly");
static_assert(!std::is_copy_assignable_v<SecretBytes>, "keys are never copied implicitly");
static_assert(std::is_nothrow_move_constructible_v<SecretBytes>);
static_assert(std::is_nothrow_move_assignable_v<SecretBytes>);

TEST(SecureZero, ZeroesExactlyTheGivenRange) {
  std::array<std::uint8_t, 32> buf{};
  buf.fill(0xA5);
  secure_zero(buf.data() + 4, 20);
  for (std::size_t i = 0; i < buf.size(); ++i) {
    if (i >= 4 && i < 24) {
      EXPECT_EQ(buf[i], 0) << i;
    } else {
      EXPECT_EQ(buf[i], 0xA5) << i;
    }
  }
}

TEST(SecureZero, NullAndEmptyAreNoOps) {
  secure_zero(nullptr, 0);
  secure_zero(nullptr, 16);
  std::uint8_t b = 0x11;
  secure_zero(&b, 0);
  EXPECT_EQ(b, 0x11);
}

TEST(SecretBytes, ConstructsZeroedAndFromData) {
  SecretBytes z(16);
  EXPECT_EQ(z.size(), 16u);
  EXPECT_FALSE(z.empty());
  for (std::size_t i = 0; i < z.size(); ++i) EXPECT_EQ(z[i], 0);

  const std::vector<std::uint8_t> key = {1, 2, 3, 4, 5};
  SecretBytes k(key);
  ASSERT_EQ(k.size(), 5u);
  EXPECT_NE(k.data(), key.data());  // owns a copy
  EXPECT_TRUE(std::equal(key.begin(), key.end(), k.span().begin(), k.span().end()));
  k.mutable_span()[0] = 9;
  EXPECT_EQ(k[0], 9);
  EXPECT_EQ(key[0], 1);

  SecretBytes empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_TRUE(empty.span().empty());
  SecretBytes zero_len(std::size_t{0});
  EXPECT_TRUE(zero_len.empty());
}

TEST(SecretBytes, ClearEmpties) {
  const std::vector<std::uint8_t> key(32, 0x5C);
  SecretBytes k(key);
  k.clear();
  EXPECT_TRUE(k.empty());
  EXPECT_EQ(k.size(), 0u);
  EXPECT_EQ(k.data(), nullptr);
  k.clear();  // idempotent
  EXPECT_TRUE(k.empty());
}

TEST(SecretBytes, ZeroizesBeforeFreeOnClear) {
  SecretBytes k(std::vector<std::uint8_t>(48, 0xC3));
  watch(k);
  k.clear();
  EXPECT_TRUE(g_watched_freed);
  EXPECT_TRUE(g_watched_was_zero);
}

TEST(SecretBytes, ZeroizesBeforeFreeOnDestruction) {
  {
    SecretBytes k(std::vector<std::uint8_t>(32, 0x5A));
    watch(k);
  }
  EXPECT_TRUE(g_watched_freed);
  EXPECT_TRUE(g_watched_was_zero);
}

TEST(SecretBytes, ZeroizesOldKeyWhenAssignedOver) {
  SecretBytes old_key(std::vector<std::uint8_t>(16, 0x77));
  watch(old_key);
  old_key = SecretBytes(std::vector<std::uint8_t>(16, 0x11));
  EXPECT_TRUE(g_watched_freed);
  EXPECT_TRUE(g_watched_was_zero);
  EXPECT_EQ(old_key[0], 0x11);
}

TEST(SecretBytes, TheHookSeesNonZeroBuffers) {
  // Control: a plain new[]/delete[] of non-zero bytes is reported as such,
  // so the checks above cannot pass vacuously.
  auto* raw = new std::uint8_t[8];
  for (int i = 0; i < 8; ++i) raw[i] = 0xEE;
  g_watched = raw;
  g_watched_len = 8;
  g_watched_freed = false;
  g_watched_was_zero = true;
  delete[] raw;
  EXPECT_TRUE(g_watched_freed);
  EXPECT_FALSE(g_watched_was_zero);
}

TEST(SecretBytes, MoveLeavesSourceEmpty) {
  const std::vector<std::uint8_t> key = {0xDE, 0xAD, 0xBE, 0xEF};
  SecretBytes a(key);
  const std::uint8_t* p = a.data();
  SecretBytes b(std::move(a));
  EXPECT_EQ(b.data(), p);  // the buffer moved, no copy left behind
  EXPECT_EQ(b.size(), 4u);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_EQ(a.data(), nullptr);

  SecretBytes c(std::vector<std::uint8_t>{1, 2});
  c = std::move(b);
  EXPECT_EQ(c.size(), 4u);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c[3], 0xEF);
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)

  // Self-move-assignment keeps the contents.
  SecretBytes& alias = c;
  c = std::move(alias);
  EXPECT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], 0xDE);
}

TEST(SecretBytes, CloneIsIndependent) {
  SecretBytes a(std::vector<std::uint8_t>{7, 8, 9});
  SecretBytes b = a.clone();
  ASSERT_EQ(b.size(), 3u);
  EXPECT_NE(a.data(), b.data());
  b[0] = 0;
  EXPECT_EQ(a[0], 7);
  SecretBytes e;
  SecretBytes e2 = e.clone();
  EXPECT_TRUE(e2.empty());
}

}  // namespace
}  // namespace layersec
