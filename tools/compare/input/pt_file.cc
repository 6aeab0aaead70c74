// A restricted reader of torch.save's .pt files (pt_file.h): the zip
// directory (zip_reader.h), then data.pkl run by a whitelist unpickler.

#include "tools/compare/input/pt_file.h"

#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "tools/compare/input/zip_reader.h"

namespace tprobe::compare {
namespace {

constexpr size_t kMaxStack = 4096;  // a plain tensor's pickle needs ~20
constexpr size_t kMaxDims = 64;

// A value of the pickle machine.
struct Value {
  enum Kind {
    kNone,
    kBool,
    kInt,
    kText,
    kTuple,  // also a list
    kGlobal,
    kStorage,
    kTensor,
    kDict,
    kMark
  } kind = kNone;
  int64_t number = 0;
  std::string text;  // kText; kGlobal "module.name"; kStorage's key
  std::shared_ptr<std::vector<Value>> items;  // kTuple
  // kStorage / kTensor
  std::optional<DType> dtype;
  std::vector<int64_t> shape;
  int64_t offset = 0;
  bool contiguous = true;
};

std::optional<DType> StorageDType(std::string_view global) {
  static constexpr std::pair<std::string_view, DType> kStorages[] = {
      {"torch.FloatStorage", DType::kFloat32},
      {"torch.DoubleStorage", DType::kFloat64},
      {"torch.HalfStorage", DType::kFloat16},
      {"torch.BFloat16Storage", DType::kBFloat16},
      {"torch.LongStorage", DType::kInt64},
      {"torch.IntStorage", DType::kInt32},
      {"torch.ShortStorage", DType::kInt16},
      {"torch.CharStorage", DType::kInt8},
      {"torch.ByteStorage", DType::kUInt8},
      {"torch.BoolStorage", DType::kBool},
      {"torch.ComplexFloatStorage", DType::kComplex64},
      {"torch.ComplexDoubleStorage", DType::kComplex128},
  };
  for (const auto& [name, dtype] : kStorages) {
    if (global == name) return dtype;
  }
  return std::nullopt;
}

bool AllowedGlobal(std::string_view g) {
  return g == "torch._utils._rebuild_tensor_v2" ||
         g == "torch._utils._rebuild_parameter" ||
         g == "collections.OrderedDict" || StorageDType(g).has_value();
}

Value Tuple(std::vector<Value> items) {
  Value v;
  v.kind = Value::kTuple;
  v.items = std::make_shared<std::vector<Value>>(std::move(items));
  return v;
}

// Runs data.pkl; returns the tensor it builds.
class Unpickler {
 public:
  Unpickler(const std::string& path, std::span<const std::byte> pkl)
      : path_(path), p_(pkl) {}

  Result<Value> Run() {
    while (true) {
      if (at_ >= p_.size()) return Bad("no STOP");
      const uint8_t op = std::to_integer<uint8_t>(p_[at_++]);
      if (stack_.size() > kMaxStack) return Bad("stack too deep");
      Status s = Step(op);
      if (!s.ok()) return s;
      if (stopped_) {
        if (stack_.size() != 1 || stack_[0].kind != Value::kTensor) {
          return Bad("it does not hold one tensor");
        }
        return stack_[0];
      }
    }
  }

 private:
  Status Bad(const std::string& what) const {
    return Status::InvalidArgument(path_ + ": data.pkl: " + what);
  }
  bool Take(size_t n, std::string_view* out) {
    if (p_.size() - at_ < n) return false;
    *out = std::string_view(reinterpret_cast<const char*>(&p_[at_]), n);
    at_ += n;
    return true;
  }
  bool TakeInt(size_t n, uint64_t* out) {
    if (p_.size() - at_ < n) return false;
    *out = LittleEndian(&p_[at_], n);
    at_ += n;
    return true;
  }
  bool Line(std::string* out) {
    const size_t start = at_;
    while (at_ < p_.size() && p_[at_] != std::byte{'\n'}) ++at_;
    if (at_ >= p_.size()) return false;
    out->assign(reinterpret_cast<const char*>(&p_[start]), at_ - start);
    ++at_;
    return true;
  }
  Result<Value> Pop() {
    if (stack_.empty() || stack_.back().kind == Value::kMark) {
      return Bad("stack underflow");
    }
    Value v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  // The items above the topmost mark, which is removed.
  Result<std::vector<Value>> PopMark() {
    size_t m = stack_.size();
    while (m > 0 && stack_[m - 1].kind != Value::kMark) --m;
    if (m == 0) return Bad("no MARK");
    std::vector<Value> items(std::make_move_iterator(stack_.begin() + m),
                             std::make_move_iterator(stack_.end()));
    stack_.resize(m - 1);
    return items;
  }
  void Push(Value v) { stack_.push_back(std::move(v)); }
  Status PushInt(int64_t n) {
    Value v;
    v.kind = Value::kInt;
    v.number = n;
    Push(std::move(v));
    return Status::Ok();
  }
  Status PushText(std::string_view s) {
    Value v;
    v.kind = Value::kText;
    v.text = s;
    Push(std::move(v));
    return Status::Ok();
  }
  Status PushGlobal(const std::string& module, const std::string& name) {
    const std::string g = module + "." + name;
    if (!AllowedGlobal(g)) return Bad("refuses the global " + g);
    Value v;
    v.kind = Value::kGlobal;
    v.text = g;
    Push(std::move(v));
    return Status::Ok();
  }

  static std::optional<std::vector<int64_t>> Ints(const Value& v) {
    if (v.kind != Value::kTuple) return std::nullopt;
    std::vector<int64_t> out;
    for (const Value& i : *v.items) {
      if (i.kind != Value::kInt) return std::nullopt;
      out.push_back(i.number);
    }
    return out;
  }

  Result<Value> Reduce(const Value& f, const Value& args) {
    if (f.kind != Value::kGlobal || args.kind != Value::kTuple) {
      return Bad("REDUCE of something other than an allowed global");
    }
    const std::vector<Value>& a = *args.items;
    if (f.text == "collections.OrderedDict") {
      Value d;
      d.kind = Value::kDict;
      return d;
    }
    if (f.text == "torch._utils._rebuild_parameter") {
      if (a.empty() || a[0].kind != Value::kTensor) {
        return Bad("_rebuild_parameter without a tensor");
      }
      return a[0];
    }
    if (f.text != "torch._utils._rebuild_tensor_v2" || a.size() < 4 ||
        a[0].kind != Value::kStorage || a[1].kind != Value::kInt) {
      return Bad("unexpected call of " + f.text);
    }
    std::optional<std::vector<int64_t>> size = Ints(a[2]);
    std::optional<std::vector<int64_t>> stride = Ints(a[3]);
    if (!size || !stride || size->size() != stride->size() ||
        size->size() > kMaxDims) {
      return Bad("bad size or stride");
    }
    Value t = a[0];
    t.kind = Value::kTensor;
    t.shape = *size;
    t.offset = a[1].number;
    // Contiguous: each stride is the product of the later sizes (a size of
    // 1 may have any stride).
    int64_t expect = 1;
    for (size_t i = size->size(); i-- > 0;) {
      if ((*size)[i] < 0) return Bad("negative size");
      if ((*size)[i] != 1 && (*stride)[i] != expect) t.contiguous = false;
      expect *= (*size)[i];
    }
    return t;
  }

  // Runs the opcode `op`, or refuses it. Each family below runs its opcodes
  // and returns nullopt for any other.
  Status Step(uint8_t op) {
    for (auto family :
         {&Unpickler::Framing, &Unpickler::Scalars, &Unpickler::Containers,
          &Unpickler::Globals, &Unpickler::Memo}) {
      if (std::optional<Status> s = (this->*family)(op)) return *std::move(s);
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", op);
    return Bad(std::string("refuses the opcode ") + hex);
  }

  // PROTO, FRAME and STOP.
  std::optional<Status> Framing(uint8_t op) {
    uint64_t n = 0;
    switch (op) {
      case 0x80:  // PROTO
        return TakeInt(1, &n) && n <= 5 ? Status::Ok() : Bad("bad PROTO");
      case 0x95:  // FRAME
        return TakeInt(8, &n) ? Status::Ok() : Bad("bad FRAME");
      case '.':
        stopped_ = true;
        return Status::Ok();
      default:
        return std::nullopt;
    }
  }

  // None, bools, ints and texts.
  std::optional<Status> Scalars(uint8_t op) {
    uint64_t n = 0;
    std::string_view s;
    switch (op) {
      case 'N':
        Push(Value{Value::kNone});
        return Status::Ok();
      case 0x88:
      case 0x89: {
        Value v;
        v.kind = Value::kBool;
        v.number = op == 0x88;
        Push(std::move(v));
        return Status::Ok();
      }
      case 'K':
        return TakeInt(1, &n) ? PushInt(static_cast<int64_t>(n))
                              : Bad("truncated");
      case 'M':
        return TakeInt(2, &n) ? PushInt(static_cast<int64_t>(n))
                              : Bad("truncated");
      case 'J':
        return TakeInt(4, &n) ? PushInt(static_cast<int32_t>(n))
                              : Bad("truncated");
      case 0x8a: {  // LONG1
        uint64_t len = 0;
        if (!TakeInt(1, &len) || len > 8 || !TakeInt(len, &n)) {
          return Bad("bad LONG1");
        }
        if (len > 0 && len < 8 && (n >> (8 * len - 1)) & 1) {
          n |= ~uint64_t{0} << (8 * len);  // sign-extend
        }
        return PushInt(static_cast<int64_t>(n));
      }
      case 'X':  // BINUNICODE
      case 'T':  // BINSTRING
        return TakeInt(4, &n) && Take(n, &s) ? PushText(s) : Bad("truncated");
      case 0x8c:  // SHORT_BINUNICODE
      case 'U':   // SHORT_BINSTRING
        return TakeInt(1, &n) && Take(n, &s) ? PushText(s) : Bad("truncated");
      default:
        return std::nullopt;
    }
  }

  // MARK, tuples, lists and the (ignored) dicts.
  std::optional<Status> Containers(uint8_t op) {
    switch (op) {
      case '(':  // MARK
        Push(Value{Value::kMark});
        return Status::Ok();
      case ')':
        Push(Tuple({}));
        return Status::Ok();
      case ']':
        Push(Tuple({}));
        return Status::Ok();
      case '}':
        Push(Value{Value::kDict});
        return Status::Ok();
      case 't': {
        Result<std::vector<Value>> items = PopMark();
        if (!items.ok()) return items.status();
        Push(Tuple(std::move(*items)));
        return Status::Ok();
      }
      case 0x85:
      case 0x86:
      case 0x87: {
        const size_t k = op - 0x84;
        if (stack_.size() < k) return Bad("stack underflow");
        std::vector<Value> items;
        for (size_t i = stack_.size() - k; i < stack_.size(); ++i) {
          if (stack_[i].kind == Value::kMark) return Bad("MARK in TUPLE");
          items.push_back(std::move(stack_[i]));
        }
        stack_.resize(stack_.size() - k);
        Push(Tuple(std::move(items)));
        return Status::Ok();
      }
      case 's': {  // SETITEM: only into the (ignored) dicts
        if (stack_.size() < 3) return Bad("stack underflow");
        stack_.resize(stack_.size() - 2);
        return stack_.back().kind == Value::kDict
                   ? Status::Ok()
                   : Bad("SETITEM on a non-dict");
      }
      case 'u': {  // SETITEMS
        Result<std::vector<Value>> items = PopMark();
        if (!items.ok()) return items.status();
        return !stack_.empty() && stack_.back().kind == Value::kDict
                   ? Status::Ok()
                   : Bad("SETITEMS on a non-dict");
      }
      case 'a': {  // APPEND
        Result<Value> v = Pop();
        if (!v.ok()) return v.status();
        if (stack_.empty() || stack_.back().kind != Value::kTuple) {
          return Bad("APPEND on a non-list");
        }
        stack_.back().items->push_back(std::move(*v));
        return Status::Ok();
      }
      case 'e': {  // APPENDS
        Result<std::vector<Value>> items = PopMark();
        if (!items.ok()) return items.status();
        if (stack_.empty() || stack_.back().kind != Value::kTuple) {
          return Bad("APPENDS on a non-list");
        }
        for (Value& v : *items) stack_.back().items->push_back(std::move(v));
        return Status::Ok();
      }
      default:
        return std::nullopt;
    }
  }

  // The allowed globals, persistent ids (the storages), calls and BUILD.
  std::optional<Status> Globals(uint8_t op) {
    switch (op) {
      case 'c': {  // GLOBAL
        std::string module, name;
        if (!Line(&module) || !Line(&name)) return Bad("bad GLOBAL");
        return PushGlobal(module, name);
      }
      case 0x93: {  // STACK_GLOBAL
        Result<Value> name = Pop();
        if (!name.ok()) return name.status();
        Result<Value> module = Pop();
        if (!module.ok()) return module.status();
        if (name->kind != Value::kText || module->kind != Value::kText) {
          return Bad("bad STACK_GLOBAL");
        }
        return PushGlobal(module->text, name->text);
      }
      case 'Q': {  // BINPERSID: ('storage', type, key, location, numel)
        Result<Value> pid = Pop();
        if (!pid.ok()) return pid.status();
        if (pid->kind != Value::kTuple || pid->items->size() < 5) {
          return Bad("bad persistent id");
        }
        const std::vector<Value>& a = *pid->items;
        if (a[0].kind != Value::kText || a[0].text != "storage" ||
            a[1].kind != Value::kGlobal || a[2].kind != Value::kText) {
          return Bad("bad persistent id");
        }
        Value storage;
        storage.kind = Value::kStorage;
        storage.dtype = StorageDType(a[1].text);
        storage.text = a[2].text;
        if (!storage.dtype) return Bad("persistent id of " + a[1].text);
        Push(std::move(storage));
        return Status::Ok();
      }
      case 'R': {  // REDUCE
        Result<Value> args = Pop();
        if (!args.ok()) return args.status();
        Result<Value> f = Pop();
        if (!f.ok()) return f.status();
        Result<Value> v = Reduce(*f, *args);
        if (!v.ok()) return v.status();
        Push(std::move(*v));
        return Status::Ok();
      }
      case 'b': {  // BUILD: a tensor's state (none for a plain one) is dropped
        Result<Value> state = Pop();
        if (!state.ok()) return state.status();
        return stack_.empty() ? Bad("BUILD on nothing") : Status::Ok();
      }
      default:
        return std::nullopt;
    }
  }

  // PUT and GET of the memo.
  std::optional<Status> Memo(uint8_t op) {
    uint64_t n = 0;
    switch (op) {
      case 'q':
      case 'r':
      case 0x94: {  // BINPUT, LONG_BINPUT, MEMOIZE
        if (op == 'q' && !TakeInt(1, &n)) return Bad("truncated");
        if (op == 'r' && !TakeInt(4, &n)) return Bad("truncated");
        if (op == 0x94) n = memo_.size();
        if (stack_.empty()) return Bad("PUT on nothing");
        if (memo_.size() > kMaxStack) return Bad("memo too large");
        memo_[n] = stack_.back();
        return Status::Ok();
      }
      case 'h':
      case 'j': {  // BINGET, LONG_BINGET
        if (!TakeInt(op == 'h' ? 1 : 4, &n)) return Bad("truncated");
        const auto it = memo_.find(n);
        if (it == memo_.end()) return Bad("GET of an unknown memo");
        Push(it->second);
        return Status::Ok();
      }
      default:
        return std::nullopt;
    }
  }

  const std::string& path_;
  std::span<const std::byte> p_;
  size_t at_ = 0;
  bool stopped_ = false;
  std::vector<Value> stack_;
  std::map<uint64_t, Value> memo_;
};

}  // namespace

Result<PtLayout> ParsePtLayout(const std::string& path,
                               std::span<const std::byte> file) {
  Result<ZipDirectory> zip = ReadZipDirectory(file);
  if (!zip.ok()) {
    return Status::InvalidArgument(path + ": not a torch.save file (" +
                                   zip.status().message() + ")");
  }
  std::string prefix;
  const ZipMember* pkl = nullptr;
  for (const auto& [name, member] : *zip) {
    if (name.ends_with("/data.pkl") && name.find('/') == name.size() - 9) {
      prefix = name.substr(0, name.size() - 8);
      pkl = &member;
      break;
    }
  }
  if (!pkl) return Status::InvalidArgument(path + ": no data.pkl");
  if (const auto order = zip->find(prefix + "byteorder"); order != zip->end()) {
    const std::string_view text(
        reinterpret_cast<const char*>(file.data() + order->second.offset),
        order->second.size);
    if (text != "little") {
      return Status::InvalidArgument(path + ": a big-endian torch.save file");
    }
  }
  if (!pkl->stored) {
    return Status::InvalidArgument(path + ": data.pkl is compressed");
  }
  Unpickler unpickler(path, file.subspan(pkl->offset, pkl->size));
  Result<Value> tensor = unpickler.Run();
  if (!tensor.ok()) return tensor.status();
  if (!tensor->contiguous) {
    return Status::InvalidArgument(path + ": the tensor is not contiguous");
  }
  const auto storage = zip->find(prefix + "data/" + tensor->text);
  if (storage == zip->end() || !storage->second.stored) {
    return Status::InvalidArgument(path + ": no stored storage " +
                                   tensor->text);
  }
  PtLayout layout;
  layout.dtype = *tensor->dtype;
  layout.shape = tensor->shape;
  layout.count = 1;
  for (int64_t d : layout.shape) {
    const size_t n = static_cast<size_t>(d);
    if (n != 0 && layout.count > std::numeric_limits<size_t>::max() / n) {
      return Status::InvalidArgument(path + ": the shape is too large");
    }
    layout.count *= n;
  }
  const size_t size = ElementSize(layout.dtype);
  const size_t begin = static_cast<size_t>(tensor->offset) * size;
  if (tensor->offset < 0 || begin > storage->second.size ||
      (storage->second.size - begin) / size < layout.count) {
    return Status::InvalidArgument(path + ": the storage is too small");
  }
  layout.data_offset = storage->second.offset + begin;
  return layout;
}

}  // namespace tprobe::compare
