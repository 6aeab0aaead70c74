#include "daemon/output/entry_renderer.h"

#include <cassert>
#include <cmath>
#include <variant>

#include "common/dump/stats_json.h"
#include "common/dump/tree.h"
#include "common/fs/safe_path.h"

namespace tprobe::daemon {
namespace {

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

}  // namespace

void RenderedEntry::Clear() {
  text.Clear();
  tensors_incomplete = 0;
  incomplete_tensors.clear();
  overflow = false;
  files.clear();
}

Status EntryRenderer::Render(std::string_view name,
                             std::span<const std::byte> body,
                             const TensorLookup& lookup,
                             const RenderOptions& options, RenderedEntry* out) {
  assert(!(options.md5 && options.xor_sum));
  name_ = name;
  param_grads_ = dump::IsParamGradEntry(name);
  lookup_ = &lookup;
  options_ = &options;
  out_ = out;
  out->Clear();
  frames_.clear();
  frames_.push_back(Frame{Frame::kBody});
  return record::ReadEntryBody(body, *this);
}

void EntryRenderer::Key(std::string_view key) {
  Frame& frame = frames_.back();
  frame.key = key;
  if (frame.kind == Frame::kBody) {
    writer_.Reset(out_->text.BeginMember(key), dump::kEntryMemberDepth);
  } else {
    writer_.Key(key);
  }
}

void EntryRenderer::StartValue() {
  Frame& frame = frames_.back();
  if (frame.kind == Frame::kList) ++frame.items;
}

void EntryRenderer::EndValue() {
  if (frames_.size() == 1) out_->text.EndMember();
}

void EntryRenderer::Null() {
  StartValue();
  writer_.Null();
  EndValue();
}

void EntryRenderer::Bool(bool v) {
  StartValue();
  writer_.Bool(v);
  EndValue();
}

void EntryRenderer::Int(int64_t v) {
  StartValue();
  writer_.Int(v);
  EndValue();
}

void EntryRenderer::Float(double v) {
  StartValue();
  writer_.Float(v);
  EndValue();
}

void EntryRenderer::Str(std::string_view v) {
  StartValue();
  writer_.String(v);
  EndValue();
}

void EntryRenderer::TensorRef(uint32_t ref) {
  StartValue();
  WriteTensor(ref);
  EndValue();
}

void EntryRenderer::Open(Frame::Kind kind) {
  StartValue();
  frames_.push_back(Frame{kind});
}

void EntryRenderer::BeginList() {
  Open(Frame::kList);
  writer_.BeginList();
}

void EntryRenderer::BeginDict() {
  Open(Frame::kDict);
  writer_.BeginDict();
}

void EntryRenderer::BeginTyped(std::string_view type) {
  Open(Frame::kTyped);
  writer_.BeginDict();
  writer_.KeyToken(R"("type")");
  writer_.String(type);
  writer_.KeyToken(R"("value")");
}

void EntryRenderer::End() {
  frames_.pop_back();
  writer_.End();
  EndValue();
}

void EntryRenderer::BuildPath() {
  size_t n = 0;
  for (const Frame& frame : frames_) {
    if (frame.kind == Frame::kTyped) continue;
    if (path_.size() == n) path_.emplace_back();
    std::string& element = path_[n++];
    switch (frame.kind) {
      case Frame::kBody:
        element = Category(frame.key);
        break;
      case Frame::kDict:
        element = frame.key;
        break;
      case Frame::kList:
        element = std::to_string(frame.items - 1);
        break;
      case Frame::kTyped:
        break;
    }
  }
  path_.resize(n);
}

void EntryRenderer::WriteTensor(uint32_t ref) {
  const TensorInfo* tensor = (*lookup_)(ref);
  const bool complete = tensor != nullptr && tensor->complete;
  if (!complete) NoteIncomplete();
  if (tensor == nullptr) {
    writer_.Null();
    return;
  }
  if (complete && Overflows(tensor->stats)) out_->overflow = true;
  if (!options_->data_name || !complete) {
    WriteTensorObject(*tensor, nullptr);
    return;
  }
  BuildPath();
  file_.assign(name_);
  // A parameter gradient is the only element of its list: msprobe names
  // the file after the parameter alone.
  const bool short_name = param_grads_ && path_.size() == 2 && path_[1] == "0";
  for (size_t i = 0; i < (short_name ? 1 : path_.size()); ++i) {
    // A debug entry's one member has the empty key: its files are
    // "{name}.{path}.npy" (msprobe's "{name}.{count}.debug.{path}.pt").
    if (i == 0 && path_[0].empty()) continue;
    file_ += '.';
    file_ += path_[i];
  }
  file_ += ".npy";
  // The name comes from the trainer: '/' or ".." must not leave the
  // folder (common/fs/safe_path.h).
  out_->files.push_back(TensorFile{ref, fs::SafeComponent(file_)});
  WriteTensorObject(*tensor, &out_->files.back().file_name);
}

void EntryRenderer::WriteTensorObject(const TensorInfo& tensor,
                                      const std::string* data_name) {
  const RenderOptions& options = *options_;
  writer_.BeginDict();
  writer_.KeyToken(R"("type")");
  writer_.String(options.framework->tensor_type);
  writer_.KeyToken(R"("dtype")");
  writer_.String(options.framework->dtype_name(tensor.dtype));
  writer_.KeyToken(R"("shape")");
  writer_.BeginList();
  for (int64_t dim : tensor.shape) writer_.Int(dim);
  writer_.End();
  if (options.xor_sum) {
    writer_.KeyToken(R"("md5")");
    // null: incomplete, or no elements
    const auto* hex = std::get_if<std::string>(&tensor.xor_sum);
    const auto* value = std::get_if<double>(&tensor.xor_sum);
    if (tensor.complete && hex != nullptr) {
      writer_.String(*hex);
    } else if (tensor.complete && value != nullptr) {
      writer_.Float(*value);
    } else {
      writer_.Null();
    }
  } else {
    dump::WriteStats(tensor.complete ? tensor.stats : stats::TensorStats{},
                     writer_);
  }
  if (options.framework->writes_requires_grad) {
    writer_.KeyToken(R"("requires_grad")");
    writer_.Bool(tensor.requires_grad);
  }
  if (data_name != nullptr) {
    writer_.KeyToken(R"("data_name")");
    writer_.String(*data_name);
  }
  if (options.md5) {
    writer_.KeyToken(R"("md5")");
    if (tensor.complete && tensor.md5) {
      writer_.String(*tensor.md5);
    } else {
      writer_.Null();
    }
  }
  writer_.End();
}

void EntryRenderer::NoteIncomplete() {
  ++out_->tensors_incomplete;
  if (out_->incomplete_tensors.size() >= dump::kMaxIncompleteNames) return;
  BuildPath();
  std::string name(name_);
  for (const std::string& key : path_) {
    name += '.';
    name += key;
  }
  out_->incomplete_tensors.push_back(std::move(name));
}

}  // namespace tprobe::daemon
