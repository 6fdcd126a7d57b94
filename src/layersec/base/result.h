// Result<T, E>: a [[nodiscard]] value-or-reason type for packet paths.
//
// A Result holds either a value of type T or an error reason of enum type E.
// It is the return type of every parser, verifier and fallible operation on a
// hot path; exceptions are reserved for start-up configuration errors.
//
// In debug builds (NDEBUG not defined) a Result that is destroyed without its
// state ever having been inspected (ok(), has_value(), operator bool, error())
// aborts, in the style of llvm::Error, so an ignored failure cannot slip by.
//
// LAYERSEC_RESULT_CHECKS (1: the check, 0: none; default: 1 unless NDEBUG)
// changes the layout of Result, so a program linking the installed layersec
// libraries must use the libraries' value: the installed CMake targets and
// pkg-config files define it (cmake/layersec_install.cmake).
#pragma once

#ifndef LAYERSEC_RESULT_CHECKS
#ifdef NDEBUG
#define LAYERSEC_RESULT_CHECKS 0
#else
#define LAYERSEC_RESULT_CHECKS 1
#endif
#endif

#include <cassert>
#include <cstdlib>
#include <type_traits>
#include <utility>
#include <variant>

namespace layersec {

// Tag that carries an error reason into a Result; `return Err(Reason::kX);`.
template <class E>
struct Err {
  E reason;
  constexpr explicit Err(E e) : reason(e) {}
};

namespace detail {
struct Unit {};

// Debug-only "was this result looked at" flag. Costs nothing in release.
class CheckFlag {
 public:
#if LAYERSEC_RESULT_CHECKS
  CheckFlag() = default;
  CheckFlag(const CheckFlag& o) : checked_(false) { o.checked_ = true; }
  CheckFlag(CheckFlag&& o) noexcept : checked_(o.checked_) { o.checked_ = true; }
  CheckFlag& operator=(const CheckFlag& o) {
    verify();
    checked_ = false;
    o.checked_ = true;
    return *this;
  }
  CheckFlag& operator=(CheckFlag&& o) noexcept {
    verify();
    checked_ = o.checked_;
    o.checked_ = true;
    return *this;
  }
  ~CheckFlag() { verify(); }
  void mark() const { checked_ = true; }

 private:
  void verify() const {
    if (!checked_) {
      // An unchecked Result was dropped: a failure may have been ignored.
      std::abort();
    }
  }
  mutable bool checked_ = false;
#else
  void mark() const {}
#endif
};
}  // namespace detail

template <class T, class E>
class [[nodiscard]] Result {
  static_assert(std::is_enum_v<E>, "Result reasons are enums");

 public:
  using value_type = T;
  using error_type = E;

  // Implicit from a value or from Err<E> so `return value;` and
  // `return Err(E::kX);` both read naturally.
  template <class U = T,
            class = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                     !std::is_same_v<std::decay_t<U>, Err<E>> &&
                                     !std::is_same_v<std::decay_t<U>, Result>>>
  constexpr Result(U&& v) : v_(std::in_place_index<0>, std::forward<U>(v)) {}  // NOLINT
  constexpr Result(Err<E> e) : v_(std::in_place_index<1>, e.reason) {}         // NOLINT

  [[nodiscard]] bool ok() const {
    flag_.mark();
    return v_.index() == 0;
  }
  [[nodiscard]] bool has_value() const { return ok(); }
  explicit operator bool() const { return ok(); }

  // Precondition: ok(). Checked by assert in debug builds.
  T& value() & {
    assert(v_.index() == 0);
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(v_.index() == 0);
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(v_.index() == 0);
    flag_.mark();
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // Precondition: !ok().
  [[nodiscard]] E error() const {
    flag_.mark();
    assert(v_.index() == 1);
    return std::get<1>(v_);
  }

  // Marks the result as inspected when the caller deliberately ignores it.
  void ignore() const { flag_.mark(); }

 private:
  std::variant<T, E> v_;
  detail::CheckFlag flag_;
};

// Status<E>: success or a reason, with no value.
template <class E>
class [[nodiscard]] Status {
  static_assert(std::is_enum_v<E>, "Status reasons are enums");

 public:
  constexpr Status() = default;                                  // success
  constexpr Status(Err<E> e) : failed_(true), reason_(e.reason) {}  // NOLINT
  static Status success() { return Status(); }

  [[nodiscard]] bool ok() const {
    flag_.mark();
    return !failed_;
  }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] E error() const {
    flag_.mark();
    assert(failed_);
    return reason_;
  }
  void ignore() const { flag_.mark(); }

 private:
  bool failed_ = false;
  E reason_{};
  detail::CheckFlag flag_;
};

}  // namespace layersec
