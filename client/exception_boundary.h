#ifndef TPROBE_CLIENT_EXCEPTION_BOUNDARY_H_
#define TPROBE_CLIENT_EXCEPTION_BOUNDARY_H_

// Where an exception stops inside libtprobe. The library and its callers
// (tprobe._C, a C++ program) may each carry their own C++ runtime: the
// wheels link libc++ statically into each shared object, so an exception
// that left the library would unwind through a second runtime that cannot
// read its type. Every function the library exports to another shared
// object is therefore noexcept and ends in a catch-all handler that calls
// NoteStopped and returns its fallback: the call is skipped, counted and
// said on stderr, never thrown across. The public C++ API
// (include/tprobe/client.h) stops exceptions the same way in client.cc.

#include <cstdint>

#include "common/internal_api.h"

namespace tprobe::client {

// Counts the exception being handled (call it only from a catch handler)
// and, the first few times in a process, prints which call it stopped and
// what it was.
void NoteStopped(const char* where) noexcept;

// How many exceptions the library stopped in this process.
TPROBE_INTERNAL uint64_t StoppedExceptions() noexcept;

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_EXCEPTION_BOUNDARY_H_
