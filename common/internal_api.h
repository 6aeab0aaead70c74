#ifndef TPROBE_COMMON_INTERNAL_API_H_
#define TPROBE_COMMON_INTERNAL_API_H_

// TPROBE_INTERNAL marks the internal client API that libtprobe.so exports
// besides its public one (include/tprobe/client.h). The Python
// binding tprobe._C links libtprobe and calls it, so a process holds one
// client core (one copy of its state and of the tprobe.v1 protobuf
// registrations) whether it loads tprobe from Python, from C++, or both.
// It carries no ABI promise: only code built from this tree with the
// library may use it.
#define TPROBE_INTERNAL __attribute__((visibility("default")))

#endif  // TPROBE_COMMON_INTERNAL_API_H_
