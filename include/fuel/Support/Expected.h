//===- Expected.h - A value or why the environment refused it ---*- C++ -*-===//
//
// Libraries report problems with their input as diagnostics at a location
// and return LogicalResult. Failures of the environment (a file that cannot
// be read, a missing driver or device, a refused allocation) are different:
// the callee knows why, the caller knows where (which weight file of which
// JSON member, which device of the plan). Such functions return an
// Expected<T>, a value or an Error whose message the caller turns into a
// diagnostic in its own context (as LLVM's Expected<T>, without payload
// types). Nothing is thrown and the result must be checked.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_EXPECTED_H
#define FUEL_SUPPORT_EXPECTED_H

#include <cassert>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace fuel {

/// Why an operation failed, as a phrase a diagnostic can quote.
struct Error {
  std::string message;
};

template <typename T> class [[nodiscard]] Expected {
public:
  template <typename U>
    requires std::is_convertible_v<U &&, T>
  Expected(U &&value) : storage(std::in_place_index<0>, std::forward<U>(value)) {}
  Expected(Error error) : storage(std::in_place_index<1>, std::move(error.message)) {}

  explicit operator bool() const { return storage.index() == 0; }
  T &operator*() {
    assert(*this && "reading the value of a failure");
    return std::get<0>(storage);
  }
  T *operator->() { return &**this; }
  const std::string &error() const {
    assert(!*this && "reading the error of a success");
    return std::get<1>(storage);
  }

private:
  std::variant<T, std::string> storage;
};

/// The outcome of an operation without a value: `return {};` succeeds.
template <> class [[nodiscard]] Expected<void> {
public:
  Expected() = default;
  Expected(Error error) : failed(true), message(std::move(error.message)) {}

  explicit operator bool() const { return !failed; }
  const std::string &error() const {
    assert(failed && "reading the error of a success");
    return message;
  }

private:
  bool failed = false;
  std::string message;
};

} // namespace fuel

#endif // FUEL_SUPPORT_EXPECTED_H
