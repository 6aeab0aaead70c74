#ifndef TPROBE_DAEMON_OUTPUT_ENTRY_RENDERER_H_
#define TPROBE_DAEMON_OUTPUT_ENTRY_RENDERER_H_

// Turns one entry's body (a value stream, common/record/record.h) into the
// bytes of the JSON that msprobe writes as dump.json's data[name]
// (docs/format.md, sections 2.2 to 2.4), in one pass:
//   null, bool, int, float, str  ->  the JSON value itself
//   list, dict                   ->  array, object (keys in their order)
//   typed {t, v}                 ->  {"type": t, "value": v}
//   tensor_ref r                 ->  the tensor object of tensor r
//                                    (PyTorch's or MindSpore's names):
//       type, dtype, shape, Max, Min, Mean, Norm, requires_grad,
//       then data_name (task tensor) and md5 (summary_mode md5); with
//       summary_mode xor: type, dtype, shape, md5 (the xor checksum),
//       requires_grad
// A ref with no tensor renders as null; a tensor whose bytes did not all
// arrive renders with null statistics. Both count as incomplete tensors.
// A tensor whose Max or Min is Infinity or NaN marks the entry as an
// overflow (task overflow_check keeps only those entries). A key that comes
// twice in a dict is written twice (a top-level key takes its new value in
// its place, dump::EntryText).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/dtype.h"
#include "common/dump/entry_text.h"
#include "common/dump/framework.h"
#include "common/dump/json_stream_writer.h"
#include "common/record/codec.h"
#include "common/stats/tensor_stats.h"
#include "common/stats/xor_checksum.h"
#include "common/status.h"

namespace tprobe::daemon {

// A tensor the drain has closed (all chunks seen, or cut short), waiting for
// the Entry that refers to it.
struct TensorInfo {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  bool requires_grad = false;
  // False when the producer dropped some of its chunks.
  bool complete = false;
  // From stats::ComputeStats; written to dump.json only when complete.
  stats::TensorStats stats;
  // stats::Crc32Hex of the bytes, when summary_mode is md5 and complete.
  std::optional<std::string> md5;
  // stats::XorChecksum, when summary_mode is xor and complete.
  stats::XorSum xor_sum;
  // stats::Crc32 of the bytes, when complete and the bytes are kept.
  uint32_t crc = 0;
  // The bytes, kept only while they still have to be written as .npy.
  std::vector<std::byte> bytes;
};

struct RenderOptions {
  // Task tensor: complete tensors get a data_name and are listed in
  // RenderedEntry::files for the caller to write.
  bool data_name = false;
  // summary_mode md5: tensors get an "md5" key (null when incomplete).
  bool md5 = false;
  // summary_mode xor: tensors get the xor checksum under "md5" in place of
  // Max, Min, Mean and Norm (null when incomplete), as msprobe 26.x.
  bool xor_sum = false;
  // How tensors are written: "torch.Tensor" with "torch.float32" and
  // requires_grad, or "mindspore.Tensor" with "Float32" and none (never
  // null).
  const dump::Framework* framework = &dump::kPyTorch;
};

// A tensor file the entry refers to by data_name.
struct TensorFile {
  uint32_t ref;
  std::string file_name;  // relative to dump_tensor_data/
};

// What rendering an entry gave. Reused from entry to entry: Clear keeps the
// buffers.
struct RenderedEntry {
  // dump.json's data[name], in its final bytes.
  dump::EntryText text;
  uint64_t tensors_incomplete = 0;
  // The incomplete tensors, "{name}.{key path}" (the first few).
  std::vector<std::string> incomplete_tensors;
  // A complete tensor of the entry has an infinite or NaN Max or Min.
  bool overflow = false;
  std::vector<TensorFile> files;

  void Clear();
};

// Returns the tensor with `ref`, or nullptr when there is none.
using TensorLookup = std::function<const TensorInfo*(uint32_t ref)>;

// Renders entry bodies, one at a time, straight to their dump.json bytes
// (dump::JsonStreamWriter), with no JSON tree in between. It keeps its
// buffers from one entry to the next.
//
// Thread safety: none; one renderer per thread.
class EntryRenderer : private record::ValueVisitor {
 public:
  EntryRenderer() = default;
  EntryRenderer(const EntryRenderer&) = delete;
  EntryRenderer& operator=(const EntryRenderer&) = delete;

  // Renders `body`, the body of dump entry `name`, into `*out` (cleared
  // first); an error for a malformed body (record::ReadEntryBody), when
  // `*out` holds part of the entry and is to be dropped. File names follow
  // msprobe's rule "{name}.{category}.{path}.npy", where category is input
  // (input_args and backward input), kwargs (input_kwargs), output or
  // parameters, and path is the list indices and dict keys down to the
  // tensor joined by '.'. A parameters_grad entry names its files
  // "{name}.{param}.npy"; a member with the empty key (a debug entry,
  // level debug) has no category: "{name}.{path}.npy".
  //
  // REQUIRES: at most one of options.md5 and options.xor_sum.
  Status Render(std::string_view name, std::span<const std::byte> body,
                const TensorLookup& lookup, const RenderOptions& options,
                RenderedEntry* out);

 private:
  // An open container of the value stream.
  struct Frame {
    enum Kind { kBody, kList, kDict, kTyped } kind;
    size_t items = 0;      // a list's items so far
    std::string_view key;  // a dict's or the body's current key
  };

  void Key(std::string_view key) override;
  void Null() override;
  void Bool(bool v) override;
  void Int(int64_t v) override;
  void Float(double v) override;
  void Str(std::string_view v) override;
  void TensorRef(uint32_t ref) override;
  void BeginList() override;
  void BeginDict() override;
  void BeginTyped(std::string_view type) override;
  void End() override;

  // Before and after each value of the stream.
  void StartValue();
  void EndValue();
  void Open(Frame::Kind kind);
  // Fills path_ with the path of the value being written.
  void BuildPath();
  void WriteTensor(uint32_t ref);
  void WriteTensorObject(const TensorInfo& tensor,
                         const std::string* data_name);
  void NoteIncomplete();

  // Of the entry being rendered.
  std::string_view name_;
  bool param_grads_ = false;
  const TensorLookup* lookup_ = nullptr;
  const RenderOptions* options_ = nullptr;
  RenderedEntry* out_ = nullptr;

  dump::JsonStreamWriter writer_;
  std::vector<Frame> frames_;
  std::vector<std::string> path_;
  std::string file_;
};

}  // namespace tprobe::daemon

#endif  // TPROBE_DAEMON_OUTPUT_ENTRY_RENDERER_H_
