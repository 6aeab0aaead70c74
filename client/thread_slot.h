#ifndef TPROBE_CLIENT_THREAD_SLOT_H_
#define TPROBE_CLIENT_THREAD_SLOT_H_

// ThreadSlot<T>: a thread's own T, made at the thread's first Get() and
// destroyed at its exit, reached through one thread-local read.
//
// Why not a plain `thread_local T`: in a shared library (libtprobe, the
// Python binding) every read of a thread-local variable is a call to
// __tls_get_addr, and the compiler does not merge them. A `thread_local`
// object with a constructor costs one for its guard, one for its address
// and one for each field a function touches; on the hot path (every API
// call, every record) those were about 40 calls an API call. Here the
// object is reached through a plain pointer (constant-initialised: no
// guard, no wrapper), read once; the caller then keeps the T& it got.
//
// Thread safety: each thread sees only its own T.

namespace tprobe::client {

template <typename T>
class ThreadSlot {
 public:
  // This thread's T; nullptr once it was destroyed at the thread's exit (a
  // late call from another thread-local's destructor).
  static T* Get() {
    T* t = current_;
    if (t != nullptr) [[likely]]
      return t;
    return Make();
  }

 private:
  struct Owned {
    Owned() { current_ = &value; }
    ~Owned() {
      current_ = nullptr;
      gone_ = true;
    }
    T value;
  };

  [[gnu::noinline]] static T* Make() {
    if (gone_) return nullptr;
    thread_local Owned owned;
    return &owned.value;
  }

  static constinit thread_local T* current_;
  static constinit thread_local bool gone_;
};

template <typename T>
constinit thread_local T* ThreadSlot<T>::current_ = nullptr;
template <typename T>
constinit thread_local bool ThreadSlot<T>::gone_ = false;

}  // namespace tprobe::client

#endif  // TPROBE_CLIENT_THREAD_SLOT_H_
