#ifndef TPROBE_COMMON_STATUS_H_
#define TPROBE_COMMON_STATUS_H_

// The one error vocabulary of tprobe (abseil's spelling, header-only).
//
// - A bug asserts.
// - An expected failure (bad config, corrupt record, no shm space) returns a
//   Status whose message a user can act on.
// - A normal condition (ring full, daemon absent) is a bool plus a counter.

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tprobe {

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  static Status Error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    s.ok_ = false;
    return s;
  }

  bool ok() const { return ok_; }
  const std::string& message() const { return message_; }

 private:
  bool ok_ = true;
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
