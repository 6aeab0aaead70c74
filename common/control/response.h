#ifndef TPROBE_COMMON_CONTROL_RESPONSE_H_
#define TPROBE_COMMON_CONTROL_RESPONSE_H_

// A Status as a control Response (its code and message), and back. The
// daemon answers every request with one; the client and the CLI read the
// code to decide what to do (the CLI's exit status, a refused
// registration).

#include "common/status.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::control {

inline v1::Code CodeOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return v1::CODE_OK;
    case StatusCode::kInvalidArgument:
      return v1::CODE_INVALID_ARGUMENT;
    case StatusCode::kNothingToDo:
      return v1::CODE_NOTHING_TO_DO;
    case StatusCode::kPermissionDenied:
      return v1::CODE_PERMISSION_DENIED;
    case StatusCode::kUnavailable:
      return v1::CODE_UNAVAILABLE;
    case StatusCode::kInternal:
      return v1::CODE_INTERNAL;
  }
  return v1::CODE_INTERNAL;
}

// A Response carrying `status` (and no body).
inline v1::Response ResponseOf(const Status& status) {
  v1::Response r;
  r.set_code(CodeOf(status.code()));
  if (!status.ok()) r.set_error(status.message());
  return r;
}

inline bool IsOk(const v1::Response& r) { return r.code() == v1::CODE_OK; }

// The Status `r` reports. A code this build does not know, or none, is an
// internal error.
inline Status StatusOf(const v1::Response& r) {
  switch (r.code()) {
    case v1::CODE_OK:
      return Status::Ok();
    case v1::CODE_INVALID_ARGUMENT:
      return Status::InvalidArgument(r.error());
    case v1::CODE_NOTHING_TO_DO:
      return Status::NothingToDo(r.error());
    case v1::CODE_PERMISSION_DENIED:
      return Status::PermissionDenied(r.error());
    case v1::CODE_UNAVAILABLE:
      return Status::Unavailable(r.error());
    default:
      return Status::Error(r.error().empty() ? "a reply without a code"
                                             : r.error());
  }
}

}  // namespace tprobe::control

#endif  // TPROBE_COMMON_CONTROL_RESPONSE_H_
