#include "client/naming.h"

#include <charconv>

namespace tprobe::client {
namespace {

void AppendIndex(std::string* out, uint32_t index) {
  char digits[10];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, index);
  out->append(digits, end);
}

}  // namespace

std::string ModuleBase(ModuleStyle style, std::string_view path,
                       std::string_view class_name) {
  std::string base = style == ModuleStyle::kCell ? "Cell." : "Module.";
  base.reserve(base.size() + path.size() + class_name.size() + 1);
  base.append(path).append(".").append(class_name);
  return base;
}

std::string ApiBase(std::string_view prefix, std::string_view api) {
  const size_t dot = api.rfind('.');
  if (dot != std::string_view::npos) api.remove_prefix(dot + 1);
  std::string base;
  base.reserve(prefix.size() + api.size() + 1);
  base.append(prefix).append(".").append(api);
  return base;
}

std::string ModuleCallName(std::string_view base, bool forward,
                           uint32_t index) {
  std::string name;
  name.reserve(base.size() + 20);
  name.append(base).append(forward ? ".forward." : ".backward.");
  AppendIndex(&name, index);
  return name;
}

std::string ApiCallName(std::string_view base, bool forward, uint32_t index) {
  std::string name;
  name.reserve(base.size() + 20);
  name.append(base).append(".");
  AppendIndex(&name, index);
  name.append(forward ? ".forward" : ".backward");
  return name;
}

std::string ParamGradName(std::string_view module_base, uint32_t k) {
  std::string name;
  name.reserve(module_base.size() + 28);
  name.append(module_base).append(".parameters_grad.");
  AppendIndex(&name, k);
  return name;
}

uint32_t CallIndices::Next(Map<uint32_t>& map, std::string_view base) {
  auto it = map.find(base);
  if (it == map.end()) {
    map.emplace(std::string(base), 1);
    return 0;
  }
  return it->second++;
}

uint32_t CallIndices::ParamGrad(std::string_view module_base,
                                std::string_view param) {
  auto it = passes_.find(module_base);
  if (it == passes_.end()) {
    passes_.emplace(std::string(module_base), Passes{0, std::string(param)});
    return 0;
  }
  if (it->second.first_param == param) ++it->second.k;
  return it->second.k;
}

void CallIndices::Reset() {
  modules_.clear();
  apis_.clear();
  passes_.clear();
}

}  // namespace tprobe::client
