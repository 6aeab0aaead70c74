#ifndef TPROBE_CLIENT_NAMING_H_
#define TPROBE_CLIENT_NAMING_H_

// msprobe's entry names (docs/format.md, section 3) and the
// per-step call indices in them:
//
//   API call         {Prefix}.{api}.{N}.forward | backward
//   module call      Module.{path}.{Class}.forward | backward.{N}
//   MindSpore cell   Cell.{path}.{Class}.forward | backward.{N}
//   parameter grads  Module.{path}.{Class}.parameters_grad.{K}
//
// A "base" is the name without direction and index: "Functional.relu",
// "Module.layer1.0.conv1.Conv2d". Adapters build a base once per hooked
// object and pass it on every call, so the hot path only appends.
//
// Indices count calls per base and start at 0 in every step; a backward
// call reuses its forward call's index, so only forward calls count.
//
// Thread safety: the functions are pure. CallIndices: see the class.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/internal_api.h"
#include "tprobe/types.h"

namespace tprobe::client {

// How module names start: PyTorch's "Module." or MindSpore's "Cell."
// (include/tprobe/types.h).
using ModuleStyle = ::tprobe::ModuleStyle;

// "Module.{path}.{class_name}" (or "Cell.…"). The root model is never
// named: msprobe skips it, and so must the adapter.
TPROBE_INTERNAL std::string ModuleBase(ModuleStyle style, std::string_view path,
                                       std::string_view class_name) noexcept;

// "{prefix}.{last dotted part of api}": "Torch" + "linalg.norm" gives
// "Torch.norm" (msprobe names an API by its last component, so such APIs
// share one counter).
TPROBE_INTERNAL std::string ApiBase(std::string_view prefix,
                                    std::string_view api) noexcept;

// The same two into *base, reusing its capacity (the C++ Client, which gets
// path and class on every call: warm, no allocation).
void SetModuleBase(std::string* base, ModuleStyle style, std::string_view path,
                   std::string_view class_name);
void SetApiBase(std::string* base, std::string_view prefix,
                std::string_view api);

// "{base}.forward.{index}" or "{base}.backward.{index}".
TPROBE_INTERNAL std::string ModuleCallName(std::string_view base, bool forward,
                                           uint32_t index);
// The same into *name, reusing its capacity (a hook's plan, warm: no
// allocation).
void SetModuleCallName(std::string* name, std::string_view base, bool forward,
                       uint32_t index);

// "{base}.{index}.forward" or "{base}.{index}.backward".
std::string ApiCallName(std::string_view base, bool forward, uint32_t index);
void SetApiCallName(std::string* name, std::string_view base, bool forward,
                    uint32_t index);

// "{module_base}.parameters_grad.{k}".
std::string ParamGradName(std::string_view module_base, uint32_t k);
void SetParamGradName(std::string* name, std::string_view module_base,
                      uint32_t k);

// A map from text that finds a key by string_view (a hit allocates nothing).
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    return std::hash<std::string_view>{}(s);
  }
};
template <typename V>
using TextMap = std::unordered_map<std::string, V, TextHash, std::equal_to<>>;

// A map from text to a `Value` (default-constructed on first use, then kept
// for the table's lifetime at the same address) without a lock: a fixed
// open-addressing table whose slots, once given a key, keep it for good (the
// key is copied once, the first time it is seen; a warm Find allocates
// nothing). Keys beyond the table's room fall back to a map under a mutex.
// Every key also gets an id, unique in the table and never 0, so that a
// caller can store "which key" in an atomic word.
//
// Per-step state lives in a Value as epoch-tagged words (step_word): (epoch
// << 32) | value, where a word of an older epoch than the owner's current
// one reads as 0, so a new step forgets every value without touching them.
//
// Thread safety: Find may be called from any thread at the same time; a
// Value's members must be atomics (or otherwise safe to share).
template <typename Value>
class TextTable {
 public:
  struct Found {
    Value* value;
    uint32_t id;  // the key's
  };

  TextTable() : slots_(std::make_unique<Slot[]>(kSlots)) {}
  ~TextTable() {
    for (size_t i = 0; i < kSlots; ++i) {
      delete slots_[i].key.load(std::memory_order_relaxed);
    }
  }
  TextTable(const TextTable&) = delete;
  TextTable& operator=(const TextTable&) = delete;

  Found Find(std::string_view text) {
    const size_t hash = std::hash<std::string_view>{}(text);
    for (size_t i = 0; i < kMaxProbe; ++i) {
      Slot& slot = slots_[(hash + i) & (kSlots - 1)];
      const Key* key = slot.key.load(std::memory_order_acquire);
      if (key == nullptr) {
        // Threads probe in the same order and a slot never empties again, so
        // a key is claimed at most once: the loser of this race finds the
        // winner's key (possibly its own text) in the slot.
        auto fresh = std::make_unique<Key>(
            Key{hash, next_id_.fetch_add(1, std::memory_order_relaxed),
                std::string(text)});
        if (slot.key.compare_exchange_strong(key, fresh.get(),
                                             std::memory_order_acq_rel,
                                             std::memory_order_acquire)) {
          key = fresh.release();
        }
      }
      if (key->hash == hash && key->text == text) {
        return {&slot.value, key->id};
      }
    }
    std::lock_guard lock(overflow_mu_);
    auto it = overflow_.find(text);
    if (it == overflow_.end()) {
      auto spilled = std::make_unique<Spilled>();
      spilled->id = next_id_.fetch_add(1, std::memory_order_relaxed);
      it = overflow_.emplace(std::string(text), std::move(spilled)).first;
    }
    return {&it->second->value, it->second->id};
  }

 private:
  struct Key {
    size_t hash;
    uint32_t id;
    std::string text;
  };
  struct Slot {
    std::atomic<const Key*> key{nullptr};
    Value value{};
  };
  struct Spilled {
    uint32_t id = 0;
    Value value{};
  };
  static constexpr size_t kSlots = size_t{1} << 13;
  static constexpr size_t kMaxProbe = 32;

  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint32_t> next_id_{1};
  std::mutex overflow_mu_;  // guards overflow_
  TextMap<std::unique_ptr<Spilled>> overflow_;
};

// Epoch-tagged words: (epoch << 32) | value. Epochs start at 1 and only
// grow; a word of an older epoch than `epoch` reads as 0, one of a newer
// epoch (its writer raced a step boundary) reads as current.
namespace step_word {
inline uint32_t Read(uint64_t word, uint64_t epoch) {
  return (word >> 32) >= epoch ? static_cast<uint32_t>(word) : 0;
}
// Adds 1 and returns the value before.
uint32_t Bump(std::atomic<uint64_t>& word, uint64_t epoch);
}  // namespace step_word

// One counter per base text that starts again at 0 every step, without a
// lock (a TextTable of epoch-tagged counts).
//
// Thread safety: Next and Reset may be called from any thread at the same
// time. A Next concurrent with Reset counts in either step.
class StepCounters {
 public:
  // 0 for the first call of `base` in the step, then 1, 2, …
  uint32_t Next(std::string_view base) { return Next(Counter(base)); }
  // `base`'s counter, for Next(counter): found once, it stays valid while
  // this lives.
  std::atomic<uint64_t>* Counter(std::string_view base) {
    return counts_.Find(base).value;
  }
  uint32_t Next(std::atomic<uint64_t>* counter) {
    return step_word::Bump(*counter, epoch_.load(std::memory_order_acquire));
  }
  void Reset() { epoch_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  TextTable<std::atomic<uint64_t>> counts_;
  std::atomic<uint64_t> epoch_{1};
};

// The call counters of one step.
//
// Thread safety: every method may be called from any thread, concurrently
// with the others, without a lock (a call concurrent with Reset counts in
// either step). Parameter gradients can arrive at once from several
// autograd threads: each of ParamGrad's two words (the step's first
// parameter, and K) is claimed or bumped by one compare-and-swap, so every
// gradient gets the K of a pass that exists and every pass is numbered once.
// Two parameters racing to be the step's first: one wins, the other is an
// ordinary parameter of pass 0. A first-parameter gradient racing the
// module's other gradients may give them the K before or after its own
// (their order was not defined to begin with).
class CallIndices {
 public:
  // The index of the next forward call of a module (API) with this base: 0
  // for the first call of the step, then 1, 2, …
  uint32_t NextModule(std::string_view base) { return modules_.Next(base); }
  uint32_t NextApi(std::string_view base) { return apis_.Next(base); }
  // An API's counter, for NextApi(counter) (StepCounters::Counter).
  std::atomic<uint64_t>* ApiCounter(std::string_view base) {
    return apis_.Counter(base);
  }
  uint32_t NextApi(std::atomic<uint64_t>* counter) {
    return apis_.Next(counter);
  }

  // K of a parameter gradient of the module with `module_base`: the number
  // of backward passes through the module before this one in the step. A
  // pass is counted each time the first parameter that got a gradient in
  // the step gets another, so all parameters of one pass share K.
  uint32_t ParamGrad(std::string_view module_base, std::string_view param);
  // The K that the module's next pass will get, counting nothing.
  uint32_t NextParamGradPass(std::string_view module_base);

  // Forgets every count (at step()).
  void Reset();

 private:
  // A module's passes in the step, as step words.
  struct Passes {
    std::atomic<uint64_t> first{0};  // the id (params_) of the first param
    std::atomic<uint64_t> k{0};      // K of the current pass
  };
  struct NoValue {};
  StepCounters modules_;
  StepCounters apis_;
  TextTable<Passes> passes_;   // by module base
  TextTable<NoValue> params_;  // parameter names, for their ids
  std::atomic<uint64_t> epoch_{1};
};

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_NAMING_H_
