// How a tprobe._C.Session's hooks turn the Python values they saw into
// entries (py_session.h): a value encoded into an entry by the session's
// encoding (value_encoder.h), msprobe's output list, a value encoded ahead
// of its entry (Session.encode), a backward entry, and a raw entry
// (Session.record_entry, for tests of the encoding).
//
// Thread safety: every member needs the GIL; a large tensor copy into the
// ring runs with it released.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_ENTRY_VALUES_H_
#define TPROBE_CLIENT_PYTHON_BINDING_ENTRY_VALUES_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "client/entry_builder.h"
#include "client/python/binding/api_hook.h"
#include "client/python/binding/hooked_session.h"
#include "client/python/binding/type_discovery.h"
#include "common/record/writer.h"

namespace tprobe::python {

// A value encoded ahead of its entry (Session.encode): an API's inputs must
// be captured before the API runs, since in-place APIs change them.
struct Encoded {
  std::string bytes;  // one value (record::ValueWriter)
};

// The UTF-8 text of a str (no copy: CPython caches it), or false for any
// other object.
bool Text(pybind11::handle obj, std::string_view* out);

// The marker api_end and the backward calls take for a side that is left
// out (api_end: the API raised, the call is closed without an entry).
pybind11::handle NoEntry();

class EntryValues {
 public:
  EntryValues(HookedSession& session, ValueEncoding encoding);

  // `obj` encoded into `out` (value_encoder.h); a failure is counted in
  // the session's hook failures.
  void Encode(client::EntryBuilder& entry, pybind11::handle obj,
              record::ValueWriter& out);
  // msprobe's output list: a list or tuple as it is, anything else as [x].
  void EncodeOutput(client::EntryBuilder& entry, pybind11::handle output,
                    record::ValueWriter& out);
  // `value` encoded into `bytes` ahead of its entry (its tensors are pushed
  // now); null when no daemon is attached.
  void EncodeAhead(pybind11::handle value, std::string* bytes);
  // A call's arguments encoded ahead of its entry, as a `*args, **kwargs`
  // wrapper sees them: the positional ones as a list into `args_bytes`, the
  // keyword ones as a dict into `kwargs_bytes` (each null when no daemon is
  // attached).
  void EncodeArgumentsAhead(const CallArgs& args, std::string* args_bytes,
                            std::string* kwargs_bytes);
  // Session.encode: EncodeAhead as a value for a later entry.
  Encoded EncodeAhead(pybind11::handle value);
  // A backward entry of `plan` in `session`: input = gradients of the
  // forward outputs, output = gradients of the forward inputs. A side
  // passed as NoEntry() is left out: the daemon merges the entries of one
  // name, so the two sides may come in separate calls.
  void WriteBackward(client::Session& session, const client::CallPlan& plan,
                     pybind11::handle input, pybind11::handle output);
  // A raw entry: `name` as given, no naming, filters or construct records;
  // `body`'s Encoded values are copied in, the rest encoded now.
  bool RecordEntry(pybind11::handle name, pybind11::handle stack,
                   pybind11::handle body, int64_t step);

 private:
  HookedSession& session_;
  const ValueEncoding encoding_;
};

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_ENTRY_VALUES_H_
