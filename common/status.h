#ifndef TPROBE_COMMON_STATUS_H_
#define TPROBE_COMMON_STATUS_H_

// The one error vocabulary of tprobe (abseil's spelling, header-only).
//
// - A bug asserts.
// - An expected failure (bad config, corrupt record, no shm space) returns a
//   Status whose message a user can act on.
// - A normal condition (ring full, daemon absent) is a bool plus a counter.
//
// A Status has a code, which says what the caller can do about it; the
// control protocol carries it (Response.code, common/control/response.h) and
// the CLI's exit status is mapped from it.

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tprobe {

enum class StatusCode {
  kOk,
  // The request carried a bad value (a config key, a flag): fix the input.
  kInvalidArgument,
  // A valid request that changed nothing: no rank matched, the step passed.
  kNothingToDo,
  // The caller may not do this (another user's ranks, a shutdown).
  kPermissionDenied,
  // The other side is not there or went away: trying again may work.
  kUnavailable,
  // A failure of tprobe itself or of the system under it (a write failed).
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  // An error of code `code` (not kOk).
  static Status Make(StatusCode code, std::string message) {
    assert(code != StatusCode::kOk);
    Status s;
    s.code_ = code;
    s.message_ = std::move(message);
    return s;
  }
  // An error of no more particular code than kInternal.
  static Status Error(std::string message) {
    return Make(StatusCode::kInternal, std::move(message));
  }
  static Status InvalidArgument(std::string message) {
    return Make(StatusCode::kInvalidArgument, std::move(message));
  }
  static Status NothingToDo(std::string message) {
    return Make(StatusCode::kNothingToDo, std::move(message));
  }
  static Status PermissionDenied(std::string message) {
    return Make(StatusCode::kPermissionDenied, std::move(message));
  }
  static Status Unavailable(std::string message) {
    return Make(StatusCode::kUnavailable, std::move(message));
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value or an error Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "Result needs a value or an error");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace tprobe

#endif  // TPROBE_COMMON_STATUS_H_
