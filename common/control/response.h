#ifndef TPROBE_COMMON_CONTROL_RESPONSE_H_
#define TPROBE_COMMON_CONTROL_RESPONSE_H_

// A Status as a control Response (its code and message), and back. The
// daemon answers every request with one; the client and the CLI read the
// code to decide what to do (the CLI's exit status, a refused
// registration).

#include "common/status.h"
#include "tprobe/v1/control.pb.h"

namespace tprobe::control {

// Each StatusCode beside the protocol's Code: the one table both directions
// read.
struct CodePair {
  StatusCode status;
  v1::Code code;
};
inline constexpr CodePair kCodes[] = {
    {StatusCode::kOk, v1::CODE_OK},
    {StatusCode::kInvalidArgument, v1::CODE_INVALID_ARGUMENT},
    {StatusCode::kNothingToDo, v1::CODE_NOTHING_TO_DO},
    {StatusCode::kPermissionDenied, v1::CODE_PERMISSION_DENIED},
    {StatusCode::kUnavailable, v1::CODE_UNAVAILABLE},
    {StatusCode::kInternal, v1::CODE_INTERNAL},
};

inline v1::Code CodeOf(StatusCode code) {
  for (const CodePair& pair : kCodes) {
    if (pair.status == code) return pair.code;
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
  if (r.code() == v1::CODE_OK) return Status::Ok();
  for (const CodePair& pair : kCodes) {
    if (pair.code == r.code() && pair.status != StatusCode::kInternal) {
      return Status::Make(pair.status, r.error());
    }
  }
  return Status::Error(r.error().empty() ? "a reply without a code"
                                         : r.error());
}

}  // namespace tprobe::control

#endif  // TPROBE_COMMON_CONTROL_RESPONSE_H_
