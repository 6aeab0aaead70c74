#include "daemon/entry_renderer.h"

#include <cmath>

#include "common/dump/tree.h"
#include "common/fs/safe_path.h"

namespace tprobe::daemon {
namespace {

using dump::Json;

// True for an infinite or NaN Max or Min (the check of msprobe's
// OverflowCheckDataProcessor on a device with INF/NAN mode).
bool Overflows(const Json& stats) {
  for (const char* key : {"Max", "Min"}) {
    auto it = stats.find(key);
    if (it != stats.end() && it->is_number_float() &&
        !std::isfinite(it->get<double>())) {
      return true;
    }
  }
  return false;
}

// The file-name category of a top-level entry key (msprobe's
// get_save_file_path); other keys (parameter names of a parameters_grad
// entry) stand for themselves.
std::string_view Category(std::string_view key) {
  if (key == "input_args" || key == "input") return "input";
  if (key == "input_kwargs") return "kwargs";
  return key;
}

class Renderer {
 public:
  Renderer(std::string_view name, const TensorLookup& lookup,
           const RenderOptions& options)
      : name_(name),
        param_grads_(name.find(".parameters_grad.") != std::string_view::npos),
        lookup_(lookup),
        options_(options) {}

  RenderedEntry Run(const v1::Entry& entry) {
    result_.body = Json::object();
    for (const v1::DictItem& item : entry.body().items()) {
      path_.assign(1, std::string(Category(item.key())));
      result_.body[item.key()] = Value(item.value());
    }
    return std::move(result_);
  }

 private:
  Json Value(const v1::Value& v) {
    switch (v.kind_case()) {
      case v1::Value::kBoolValue:
        return v.bool_value();
      case v1::Value::kIntValue:
        return v.int_value();
      case v1::Value::kFloatValue:
        return v.float_value();
      case v1::Value::kStrValue:
        return v.str_value();
      case v1::Value::kList: {
        Json out = Json::array();
        for (int i = 0; i < v.list().items_size(); ++i) {
          path_.push_back(std::to_string(i));
          out.push_back(Value(v.list().items(i)));
          path_.pop_back();
        }
        return out;
      }
      case v1::Value::kDict: {
        Json out = Json::object();
        for (const v1::DictItem& item : v.dict().items()) {
          path_.push_back(item.key());
          out[item.key()] = Value(item.value());
          path_.pop_back();
        }
        return out;
      }
      case v1::Value::kTyped: {
        Json out = Json::object();
        out["type"] = v.typed().type();
        out["value"] = Value(v.typed().value());
        return out;
      }
      case v1::Value::kTensorRef:
        return Tensor(v.tensor_ref());
      case v1::Value::kNull:
      case v1::Value::KIND_NOT_SET:
        break;
    }
    return nullptr;
  }

  Json Tensor(uint32_t ref) {
    const TensorInfo* tensor = lookup_(ref);
    if (tensor == nullptr || !tensor->complete) NoteIncomplete();
    if (tensor == nullptr) return nullptr;
    if (tensor->complete && Overflows(tensor->stats)) result_.overflow = true;
    if (!options_.data_name || !tensor->complete) {
      return RenderTensor(*tensor, options_, nullptr);
    }
    std::string file(name_);
    // A parameter gradient is the only element of its list: msprobe names
    // the file after the parameter alone.
    const bool short_name =
        param_grads_ && path_.size() == 2 && path_[1] == "0";
    for (size_t i = 0; i < (short_name ? 1 : path_.size()); ++i) {
      file += '.';
      file += path_[i];
    }
    file += ".npy";
    // The name comes from the trainer: '/' or ".." must not leave the
    // folder (common/fs/safe_path.h).
    file = fs::SafeComponent(file);
    result_.files.push_back(TensorFile{ref, file});
    return RenderTensor(*tensor, options_, &file);
  }

  void NoteIncomplete() {
    ++result_.tensors_incomplete;
    if (result_.incomplete_tensors.size() >= dump::kMaxIncompleteNames) return;
    std::string name(name_);
    for (const std::string& key : path_) name += "." + key;
    result_.incomplete_tensors.push_back(std::move(name));
  }

  std::string_view name_;
  bool param_grads_;
  const TensorLookup& lookup_;
  const RenderOptions& options_;
  std::vector<std::string> path_;
  RenderedEntry result_;
};

}  // namespace

Json RenderTensor(const TensorInfo& tensor, const RenderOptions& options,
                  const std::string* data_name) {
  Json out = Json::object();
  out["type"] = options.mindspore ? "mindspore.Tensor" : "torch.Tensor";
  out["dtype"] = std::string(options.mindspore ? MindSporeName(tensor.dtype)
                                               : TorchName(tensor.dtype));
  out["shape"] = tensor.shape;
  for (const char* key : {"Max", "Min", "Mean", "Norm"}) {
    auto it = tensor.complete ? tensor.stats.find(key) : tensor.stats.end();
    out[key] = it != tensor.stats.end() ? *it : Json(nullptr);
  }
  // msprobe's MindSpore dump writes no requires_grad.
  if (!options.mindspore) out["requires_grad"] = tensor.requires_grad;
  if (data_name != nullptr) out["data_name"] = *data_name;
  if (options.md5) {
    out["md5"] =
        tensor.complete && tensor.md5 ? Json(*tensor.md5) : Json(nullptr);
  }
  return out;
}

RenderedEntry RenderEntry(std::string_view name, const v1::Entry& entry,
                          const TensorLookup& lookup,
                          const RenderOptions& options) {
  return Renderer(name, lookup, options).Run(entry);
}

}  // namespace tprobe::daemon
