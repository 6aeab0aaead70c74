#ifndef TPROBE_INCLUDE_TPROBE_DETAIL_CLIENT_INL_H_
#define TPROBE_INCLUDE_TPROBE_DETAIL_CLIENT_INL_H_

// The header-inline members of tprobe::Client and tprobe::ScopedCall
// (tprobe/client.h, which includes this file at its end; include that
// instead). They run in the caller's code and turn the API's types into the
// plain structs of abi.h: a Value is flattened in pre-order, text becomes
// (pointer, size), and an exception from the caller's own containers
// (std::bad_alloc) stops here.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tprobe {
namespace detail {

inline void Flatten(const Value& value, Text key, std::vector<ValueNode>* out) {
  ValueNode node{};
  node.kind = static_cast<uint8_t>(value.kind());
  node.bool_value = value.bool_value();
  node.int_value = value.int_value();
  node.float_value = value.float_value();
  node.text = ToText(value.text());
  node.key = key;
  node.tensor =
      value.kind() == Value::Kind::kTensor ? &value.tensor() : nullptr;
  const auto& items = value.items();
  size_t n = items.size();
  if (value.kind() == Value::Kind::kDict && value.keys().size() < n) {
    n = value.keys().size();
  }
  if (value.kind() == Value::Kind::kTyped && n > 1) n = 1;
  node.children = static_cast<uint32_t>(n);
  out->push_back(node);
  for (size_t i = 0; i < n; ++i) {
    Flatten(items[i],
            value.kind() == Value::Kind::kDict ? ToText(value.keys()[i])
                                               : Text{nullptr, 0},
            out);
  }
}

}  // namespace detail

template <typename F>
bool Client::Catch(F&& f) noexcept {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  try {
    f();
    return true;
  } catch (...) {
    return false;
  }
#else
  f();
  return true;
#endif
}

inline void Client::SetError(void* context, const char* text,
                             size_t size) noexcept {
  if (context == nullptr) return;
  Catch([&] { static_cast<std::string*>(context)->assign(text, size); });
}

inline std::unique_ptr<Client> Client::Create(const ClientOptions& options,
                                              std::string* error) noexcept {
  detail::OptionsView view{};
  view.abi_version = TPROBE_ABI_VERSION;
  view.config_path = detail::ToText(options.config_path);
  view.dump_path = detail::ToText(options.dump_path);
  view.socket_path = detail::ToText(options.socket_path);
  view.rank = options.rank;
  view.autostart_daemon = options.autostart_daemon;
  view.daemon_path = detail::ToText(options.daemon_path);
  view.connect_timeout_ms = options.connect_timeout_ms;
  detail::ErrorSink sink{error, &SetError};
  return std::unique_ptr<Client>(CreateRaw(view, sink));
}

inline std::string Client::dump_dir() const noexcept {
  std::string dir;
  if (!Catch([&] {
        size_t size = DumpDirRaw(nullptr, 0);
        for (;;) {
          dir.resize(size);
          const size_t needed = DumpDirRaw(dir.data(), dir.size());
          if (needed <= size) {
            dir.resize(needed);
            return;
          }
          size = needed;  // the step moved on between the two calls
        }
      })) {
    dir.clear();
  }
  return dir;
}

inline Call Client::BeginModule(std::string_view path,
                                std::string_view class_name,
                                Direction direction,
                                uint32_t forward_index) noexcept {
  return BeginRaw(detail::CallSite::kModule, detail::ToText(path),
                  detail::ToText(class_name), direction, forward_index);
}

inline Call Client::BeginCell(std::string_view path,
                              std::string_view class_name, Direction direction,
                              uint32_t forward_index) noexcept {
  return BeginRaw(detail::CallSite::kCell, detail::ToText(path),
                  detail::ToText(class_name), direction, forward_index);
}

inline Call Client::BeginApi(std::string_view prefix, std::string_view api,
                             Direction direction,
                             uint32_t forward_index) noexcept {
  return BeginRaw(detail::CallSite::kApi, detail::ToText(prefix),
                  detail::ToText(api), direction, forward_index);
}

inline bool Client::AddValue(const Call& call, Section section,
                             const Value& value) noexcept {
  std::vector<detail::ValueNode> nodes;
  return Catch([&] {
           detail::Flatten(value, {nullptr, 0}, &nodes);
         }) &&
         AddValueRaw(call, section, nodes.data(), nodes.size());
}

inline bool Client::AddKwarg(const Call& call, std::string_view key,
                             const Value& value) noexcept {
  std::vector<detail::ValueNode> nodes;
  return Catch([&] {
           detail::Flatten(value, {nullptr, 0}, &nodes);
         }) &&
         AddKwargRaw(call, detail::ToText(key), nodes.data(), nodes.size());
}

inline bool Client::AddParameter(const Call& call, std::string_view name,
                                 const TensorData& tensor) noexcept {
  return AddParameterRaw(call, detail::ToText(name), tensor);
}

inline bool Client::AddStack(const Call& call,
                             const std::vector<std::string>& lines) noexcept {
  std::vector<detail::Text> texts;
  return Catch([&] {
           texts.reserve(lines.size());
           for (const std::string& line : lines) {
             texts.push_back(detail::ToText(line));
           }
         }) &&
         AddStackRaw(call, texts.data(), texts.size());
}

inline bool Client::ParamGrad(std::string_view path,
                              std::string_view class_name,
                              std::string_view name, const TensorData& grad,
                              ModuleStyle style) noexcept {
  return ParamGradRaw(detail::ToText(path), detail::ToText(class_name),
                      detail::ToText(name), grad, style);
}

inline void ScopedCall::End() noexcept {
  if (client_ != nullptr) {
    client_->EndCall(call_);
    client_ = nullptr;
  }
}
inline bool ScopedCall::Input(const TensorData& tensor) noexcept {
  return client_ != nullptr &&
         client_->AddTensor(call_, Section::kInput, tensor);
}
inline bool ScopedCall::Output(const TensorData& tensor) noexcept {
  return client_ != nullptr &&
         client_->AddTensor(call_, Section::kOutput, tensor);
}
inline bool ScopedCall::Input(const Value& value) noexcept {
  return client_ != nullptr && client_->AddValue(call_, Section::kInput, value);
}
inline bool ScopedCall::Output(const Value& value) noexcept {
  return client_ != nullptr &&
         client_->AddValue(call_, Section::kOutput, value);
}
inline bool ScopedCall::Parameter(std::string_view name,
                                  const TensorData& tensor) noexcept {
  return client_ != nullptr && client_->AddParameter(call_, name, tensor);
}
inline bool ScopedCall::Kwarg(std::string_view key,
                              const Value& value) noexcept {
  return client_ != nullptr && client_->AddKwarg(call_, key, value);
}
inline bool ScopedCall::Stack(const std::vector<std::string>& lines) noexcept {
  return client_ != nullptr && client_->AddStack(call_, lines);
}

}  // namespace tprobe

#endif  // TPROBE_INCLUDE_TPROBE_DETAIL_CLIENT_INL_H_
