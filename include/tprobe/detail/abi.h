#ifndef TPROBE_INCLUDE_TPROBE_DETAIL_ABI_H_
#define TPROBE_INCLUDE_TPROBE_DETAIL_ABI_H_

// What crosses the libtprobe boundary beneath tprobe/client.h: plain structs
// and (pointer, size) text only, so that a Client built with one standard
// library talks to a libtprobe built with another. Not part of the API: the
// header-inline members of Client (client_inl.h) turn the API's types into
// these, and client/client.cc reads them back. A change here is a change of
// TPROBE_ABI_VERSION.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tprobe {

struct TensorData;

namespace detail {

// Text across the library boundary.
struct Text {
  const char* data;
  size_t size;
};
inline Text ToText(std::string_view s) noexcept { return {s.data(), s.size()}; }

// A Value flattened in pre-order for the library: each node is followed by
// its `children` (list items, dict values with their keys, the typed
// value). Built by Flatten below in the caller's code.
struct ValueNode {
  uint8_t kind;  // Value::Kind
  bool bool_value;
  uint32_t children;
  int64_t int_value;
  double float_value;
  Text text;  // kStr: the string; kTyped: the type name
  Text key;   // in a Dict: this item's key
  const TensorData* tensor;
};

// Receives the text of an error from the library.
struct ErrorSink {
  void* context;
  void (*set)(void* context, const char* text, size_t size) noexcept;
};

// ClientOptions as the library reads them.
struct OptionsView {
  uint32_t abi_version;
  Text config_path;
  Text dump_path;
  Text socket_path;
  int rank;
  bool autostart_daemon;
  Text daemon_path;
  int connect_timeout_ms;
};

enum class CallSite : uint8_t { kModule = 0, kCell = 1, kApi = 2 };

}  // namespace detail

}  // namespace tprobe

#endif  // TPROBE_INCLUDE_TPROBE_DETAIL_ABI_H_
