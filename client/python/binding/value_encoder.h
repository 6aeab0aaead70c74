// msprobe's encoding of the Python values a hook saw into an entry's value
// stream (docs/format.md, section 2.3, as msprobe 26.x writes
// it): lists, tuples, namedtuples, dicts and dataclasses as containers;
// bool, int, float, str, slice, Ellipsis and numpy scalars as typed values;
// torch.Size, torch.dtype, torch.device and torch.memory_format (or
// mindspore's dtype) as msprobe writes them; a tensor as a tensor ref, its
// bytes pushed into this thread's ring (client/entry_builder.h) on the way.
// Values of other types, and tensors without readable data (meta, float8),
// go to the Python fallback (tprobe._C.set_fallback).
//
// Thread safety: needs the GIL; a large tensor copy into the ring runs with
// the GIL released. Tensor refs are numbered per OS thread (each thread has
// its own ring) and never reused on a thread, so tensors of an abandoned
// entry cannot be mistaken for a later entry's.

#ifndef TPROBE_CLIENT_PYTHON_BINDING_VALUE_ENCODER_H_
#define TPROBE_CLIENT_PYTHON_BINDING_VALUE_ENCODER_H_

#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>

#include "client/entry_builder.h"
#include "client/python/binding/api_hook.h"
#include "client/python/binding/type_discovery.h"
#include "common/record/writer.h"

namespace tprobe::python {

// Writes msprobe's encoding of `obj` as one value into `out`, by
// `encoding`, and pushes its tensors' bytes through `entry`. Raises
// nothing: a leaf that fails to encode is null (the rest of its container
// is kept), and when the whole value fails (the framework does not import,
// say) it is null and the failure is counted in `failures` (hook_guard.h).
void EncodeValue(client::EntryBuilder& entry, pybind11::handle obj,
                 record::ValueWriter& out, ValueEncoding encoding,
                 std::atomic<uint64_t>& failures);

// EncodeValue of a call's arguments as a `*args, **kwargs` wrapper sees
// them, read from the call's own array (no tuple or dict made): the
// positional ones as a list into `args_out`, the keyword ones as a dict into
// `kwargs_out`, each as EncodeValue writes a tuple and a dict.
void EncodeArguments(client::EntryBuilder& entry, const CallArgs& args,
                     record::ValueWriter& args_out,
                     record::ValueWriter& kwargs_out, ValueEncoding encoding,
                     std::atomic<uint64_t>& failures);

}  // namespace tprobe::python

#endif  // TPROBE_CLIENT_PYTHON_BINDING_VALUE_ENCODER_H_
