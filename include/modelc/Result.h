//===- modelc/Result.h - A value or the diagnostics that prevented it ----===//
//
// Every fallible call of the modelc API returns a Result<T>: either a value
// or at least one error Diagnostic, never both missing. Warnings may come
// with a value. The library never throws, never prints and never exits.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PUBLIC_RESULT_H
#define MODELC_PUBLIC_RESULT_H

#include "modelc/Diagnostic.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace modelc::api {

template <typename T> class [[nodiscard]] Result {
public:
  /// A success.
  Result(T value, std::vector<Diagnostic> warnings = {})
      : value_(std::move(value)), diagnostics_(std::move(warnings)) {}
  /// A failure: `diagnostics` holds at least one error.
  static Result failure(std::vector<Diagnostic> diagnostics) {
    Result r;
    r.diagnostics_ = std::move(diagnostics);
    if (!r.hasErrors())
      r.diagnostics_.push_back(Diagnostic::error("operation failed without a diagnostic"));
    return r;
  }
  static Result failure(Diagnostic diagnostic) {
    return failure(std::vector<Diagnostic>{std::move(diagnostic)});
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  /// The value; calling these on a failure is a programming error and
  /// aborts (check ok() first).
  T &value() & { return checked(); }
  const T &value() const & { return const_cast<Result *>(this)->checked(); }
  T &&value() && { return std::move(checked()); }
  T &operator*() & { return checked(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &checked(); }
  const T *operator->() const { return &value(); }

  /// The errors of a failure, or the warnings of a success.
  const std::vector<Diagnostic> &diagnostics() const { return diagnostics_; }
  bool hasErrors() const {
    for (const Diagnostic &d : diagnostics_)
      if (d.severity == Severity::Error)
        return true;
    return false;
  }
  /// The diagnostics as `modelc check` prints them, without colour.
  std::string errorText() const { return formatDiagnostics(diagnostics_); }

private:
  Result() = default;
  T &checked() {
    if (!value_)
      std::abort();
    return *value_;
  }
  std::optional<T> value_;
  std::vector<Diagnostic> diagnostics_;
};

/// The result of an operation that produces no value.
struct Ok {};
using Status = Result<Ok>;

} // namespace modelc::api

#endif // MODELC_PUBLIC_RESULT_H
