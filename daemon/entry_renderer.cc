#include "daemon/entry_renderer.h"

#include <cmath>
#include <variant>

#include "common/dump/stats_json.h"
#include "common/dump/tree.h"
#include "common/fs/safe_path.h"
#include "common/record/codec.h"

namespace tprobe::daemon {
namespace {

using dump::Json;

// True for an infinite or NaN Max or Min (the check of msprobe's
// OverflowCheckDataProcessor on a device with INF/NAN mode).
bool Overflows(const stats::TensorStats& stats) {
  for (const stats::Stat* stat : {&stats.max, &stats.min}) {
    const double* v = std::get_if<double>(stat);
    if (v != nullptr && !std::isfinite(*v)) return true;
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

class Renderer : public record::ValueVisitor {
 public:
  Renderer(std::string_view name, const TensorLookup& lookup,
           const RenderOptions& options)
      : name_(name),
        param_grads_(name.find(".parameters_grad.") != std::string_view::npos),
        lookup_(lookup),
        options_(options) {
    result_.body = Json::object();
    frames_.push_back(Frame{&result_.body, Frame::kBody, 0, {}});
  }

  Result<RenderedEntry> Run(std::span<const std::byte> body) {
    if (Status s = record::ReadEntryBody(body, *this); !s.ok()) return s;
    return std::move(result_);
  }

  void Key(std::string_view key) override { frames_.back().key = key; }
  void Null() override { Leaf(nullptr); }
  void Bool(bool v) override { Leaf(v); }
  void Int(int64_t v) override { Leaf(v); }
  void Float(double v) override { Leaf(v); }
  void Str(std::string_view v) override { Leaf(std::string(v)); }
  void TensorRef(uint32_t ref) override {
    Enter();
    *Slot() = Tensor(ref);
    Leave();
  }
  void BeginList() override { Open(Json::array(), Frame::kList); }
  void BeginDict() override { Open(Json::object(), Frame::kDict); }
  void BeginTyped(std::string_view type) override {
    Json typed = Json::object();
    typed["type"] = std::string(type);
    Open(std::move(typed), Frame::kTyped);
  }
  void End() override {
    frames_.pop_back();
    Leave();
  }

 private:
  // An open container: where its next value goes.
  struct Frame {
    Json* json;
    enum Kind { kBody, kList, kDict, kTyped } kind;
    size_t index;          // a list's next index
    std::string_view key;  // a dict's or the body's next key
  };

  // Pushes the path element of the next value of the innermost container (a
  // typed value has its typed's path); Leave pops it once the value is done.
  void Enter() {
    Frame& f = frames_.back();
    switch (f.kind) {
      case Frame::kBody:
        path_.emplace_back(Category(f.key));
        break;
      case Frame::kDict:
        path_.emplace_back(f.key);
        break;
      case Frame::kList:
        path_.push_back(std::to_string(f.index));
        break;
      case Frame::kTyped:
        break;
    }
  }
  void Leave() {
    if (frames_.back().kind != Frame::kTyped) path_.pop_back();
  }

  // Where the next value goes (after Enter).
  Json* Slot() {
    Frame& f = frames_.back();
    switch (f.kind) {
      case Frame::kList:
        ++f.index;
        f.json->push_back(nullptr);
        return &f.json->back();
      case Frame::kTyped:
        return &(*f.json)["value"];
      case Frame::kBody:
      case Frame::kDict:
        break;
    }
    return &(*f.json)[std::string(f.key)];
  }

  void Leaf(Json v) {
    Enter();
    *Slot() = std::move(v);
    Leave();
  }

  void Open(Json container, Frame::Kind kind) {
    Enter();
    Json* slot = Slot();
    *slot = std::move(container);
    frames_.push_back(Frame{slot, kind, 0, {}});
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
  std::vector<Frame> frames_;
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
  if (options.xor_sum) {
    Json sum;  // null: incomplete, or no elements
    if (const auto* hex = std::get_if<std::string>(&tensor.xor_sum)) {
      sum = *hex;
    } else if (const auto* value = std::get_if<double>(&tensor.xor_sum)) {
      sum = *value;
    }
    out["md5"] = tensor.complete ? std::move(sum) : Json();
  } else {
    dump::AppendStats(tensor.complete ? tensor.stats : stats::TensorStats{},
                      &out);
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

Result<RenderedEntry> RenderEntry(std::string_view name,
                                  std::span<const std::byte> body,
                                  const TensorLookup& lookup,
                                  const RenderOptions& options) {
  return Renderer(name, lookup, options).Run(body);
}

}  // namespace tprobe::daemon
