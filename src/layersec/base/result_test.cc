// Tests for Result<T, E> and Status<E> (result.h): value and error paths,
// move semantics, and the debug-build abort on an unchecked result.
#include "layersec/base/result.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace layersec {
namespace {

enum class Reason : std::uint8_t { kA = 1, kB = 2 };

Result<int, Reason> parse_digit(char c) {
  if (c < '0' || c > '9') return Err(Reason::kA);
  return c - '0';
}

Status<Reason> check_positive(int v) {
  if (v <= 0) return Err(Reason::kB);
  return {};
}

TEST(Result, ValuePath) {
  auto r = parse_digit('7');
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.has_value());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(r.value(), 7);
  EXPECT_EQ(*r, 7);
  r.value() = 8;
  EXPECT_EQ(*r, 8);
}

TEST(Result, ErrorPath) {
  auto r = parse_digit('x');
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(r.error(), Reason::kA);
}

TEST(Result, ErrorIsEnoughToCheck) {
  // Calling error() alone counts as inspecting the result.
  auto r = parse_digit('y');
  EXPECT_EQ(r.error(), Reason::kA);
}


TEST(Result, ArrowOnStructValue) {
  struct P {
    int x;
    std::string s;
  };
  Result<P, Reason> r = P{3, "abc"};
  ASSERT_TRUE(r);
  EXPECT_EQ(r->x, 3);
  EXPECT_EQ(r->s, "abc");
  const auto& cr = r;
  EXPECT_EQ(cr->s.size(), 3u);
  EXPECT_EQ((*cr).x, 3);
}

TEST(Result, MoveOnlyValue) {
  Result<std::unique_ptr<int>, Reason> r = std::make_unique<int>(42);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 42);
}

TEST(Result, MoveConstructionCarriesCheckedState) {
  auto a = parse_digit('5');
  ASSERT_TRUE(a.ok());
  auto b = std::move(a);  // b inherits "checked"
  EXPECT_EQ(b.value(), 5);

  auto c = parse_digit('q');
  auto d = std::move(c);  // c was unchecked: d must now be checked
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.error(), Reason::kA);
}

TEST(Result, MoveAssignment) {
  auto a = parse_digit('1');
  ASSERT_TRUE(a.ok());
  auto b = parse_digit('2');
  ASSERT_TRUE(b.ok());
  a = std::move(b);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.value(), 2);
}

TEST(Result, CopyRequiresItsOwnCheck) {
  auto a = parse_digit('3');
  auto b = a;  // copy: a is considered checked, b is not
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.value(), 3);
  EXPECT_EQ(a.value(), 3);
}

TEST(Result, ValuesInContainer) {
  std::vector<Result<int, Reason>> v;
  for (char c : std::string("1x3")) v.push_back(parse_digit(c));
  int sum = 0;
  int errors = 0;
  for (auto& r : v) {
    if (r) {
      sum += *r;
    } else {
      ++errors;
      EXPECT_EQ(r.error(), Reason::kA);
    }
  }
  EXPECT_EQ(sum, 4);
  EXPECT_EQ(errors, 1);
}

TEST(Status, SuccessAndFailure) {
  auto ok = check_positive(1);
  EXPECT_TRUE(ok.ok());
  auto bad = check_positive(0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), Reason::kB);
  auto s = Status<Reason>::success();
  EXPECT_TRUE(static_cast<bool>(s));
  check_positive(-1).ignore();
}

TEST(Status, MoveCarriesState) {
  auto a = check_positive(-5);
  auto b = std::move(a);
  EXPECT_FALSE(b.ok());
  EXPECT_EQ(b.error(), Reason::kB);
  Status<Reason> c;
  ASSERT_TRUE(c.ok());
  c = check_positive(2);
  EXPECT_TRUE(c.ok());
}

#ifndef NDEBUG
// In debug builds an unchecked Result or Status aborts when destroyed, so an
// ignored failure cannot slip through (llvm::Error style).
using R = Result<int, Reason>;

void drop_unchecked_error() {
  R r = parse_digit('x');
  (void)&r;
}
void drop_unchecked_success() {
  R r = parse_digit('4');  // a success must be checked too
  (void)&r;
}
void drop_unchecked_status() {
  Status<Reason> s = check_positive(0);
  (void)&s;
}
void overwrite_unchecked() {
  R r = parse_digit('1');
  r = parse_digit('2');  // the first result was never looked at
  r.ignore();
}
void drop_unchecked_copy() {
  R a = parse_digit('1');
  a.ignore();
  R b = a;  // a copy needs its own check
  (void)&b;
}

// ignore() is the deliberate way to drop a result: these would abort at the
// closing brace if it did not count as a check.
void drop_ignored() {
  R r = parse_digit('z');
  r.ignore();
  parse_digit('1').ignore();
  check_positive(-3).ignore();
}

TEST(ResultDeathTest, IgnoreIsADeliberateDrop) {
  drop_ignored();  // returns normally
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        drop_ignored();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ResultDeathTest, UncheckedResultAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(drop_unchecked_error(), "");
  EXPECT_DEATH(drop_unchecked_success(), "");
}

TEST(ResultDeathTest, UncheckedStatusAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(drop_unchecked_status(), "");
}

TEST(ResultDeathTest, OverwritingUncheckedResultAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(overwrite_unchecked(), "");
}

TEST(ResultDeathTest, CopyOfUncheckedMustBeChecked) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(drop_unchecked_copy(), "");
}
#endif

}  // namespace
}  // namespace layersec
