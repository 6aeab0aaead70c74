#ifndef TPROBE_CLIENT_API_SITE_H_
#define TPROBE_CLIENT_API_SITE_H_

// ApiSite: what the calls of one API can reuse between them. Its caller
// keeps one per API (tprobe._C.ApiWrapper does) and hands it to
// Session::BeginApi, which fills it on a call and checks on the next that
// it still holds:
// - the API's call counter (CallIndices), found by hashing its base;
// - whether risk_level passes the API, when risk_level alone filters (the
//   answer depends on the base alone);
// - the interned ids of the API's call names, by call index.
//
// The first two hold for one config version of one session: versions are
// numbered across the process, so `version` tells both. The ids hold for
// one claim of this thread's ring (Recorder::InternToken). Each saves a
// hash and a table lookup of the call's name or base on every API call:
// with the name written in one piece, about 630 of the 10,000 instructions
// an L1 API call added (docs/performance.md, stop 67).
//
// Thread safety: one thread at a time (the binding's callers hold the GIL).

#include <atomic>
#include <cstdint>
#include <vector>

namespace tprobe::client {

struct ApiSite {
  // The call ids kept, at most: an API called more often in a step
  // interns its later names each time.
  static constexpr size_t kMaxNameIds = 4096;

  uint64_t version = 0;  // the ConfigVersion serial it holds for; 0: none
  // The API's call counter (CallIndices::ApiCounter).
  std::atomic<uint64_t>* count = nullptr;
  bool risk_passes = false;        // risk_level passes the API
  uint64_t intern_token = 0;       // the ring claim name_ids hold for
  std::vector<uint32_t> name_ids;  // by call index; 0: not interned yet
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_API_SITE_H_
