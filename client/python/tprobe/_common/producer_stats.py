"""Statistics the framework computes (config key tprobe.statistics_on;
docs/architecture.md, "The path of a device tensor").

The binding hands each tensor whose statistics the framework computes to
ProducerStats.hook, in the hook's thread. The hook queues the framework's
reductions on the tensor's device and returns at once: nothing waits for
the device there. A thread's results are batched (kBatch tensors, or fewer
at a step's end); a full batch is copied to pinned host memory without
waiting, behind an event on the stream that computed it, and handed to the
statistics thread, which waits for the event, reads the values and writes
them into its own ring as ProducerStats records. Session.step flushes first,
so a step's cut covers its statistics: one wait per step, none per tensor.

Thread safety: hook may be called from any thread with the GIL held; flush
from any thread but the statistics thread.
"""

import ctypes
import queue
import threading
from typing import Any, Dict, List, Optional

from tprobe import _C

# Tensors per batch: one stack, one copy and one event per batch. On a GPU a
# per-tensor event costs a few microseconds; at 64 its share is negligible,
# and the daemon holds at most a batch's entries behind the first.
kBatch = 64


class _Busy(threading.local):
    """The binding's per-thread busy counter: framework calls made here are
    not recorded as API calls."""
    busy = _C.busy_flag


class _Batch:
    """One thread's results not yet handed to the statistics thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # The summary mode and the stream that computed them (None: host).
        self.key: Any = None
        self.results: List[Any] = []
        self.places: List[bytes] = []


class ProducerStats:
    """Runs a session's reducers, one per summary mode the framework
    computes ("statistics", and "xor" and "md5" under PyTorch): each has
    reduce(t) -> (result, kinds), stream_key(t), to_host(results, key) ->
    (host, waiter or None) and fetch(host) -> bytes (4 little-endian 8-byte
    values per tensor)."""

    def __init__(self, session: Any, reducers: Dict[str, Any]) -> None:
        self._session = session
        self._reducers = reducers
        self._local = threading.local()
        self._busy = _Busy()
        self._batches: List[_Batch] = []
        self._lock = threading.Lock()
        self._queue: "queue.Queue" = queue.Queue()
        self._thread: Optional[threading.Thread] = None

    def hook(self, tensor: Any, place: bytes,
             summary: str = "statistics") -> None:
        """Queues the reductions of `tensor` for `summary`; `place` is the
        binding's 20 bytes that say where its Tensor record went."""
        reducer = self._reducers[summary]
        result, kinds = reducer.reduce(tensor)
        key = (summary, reducer.stream_key(tensor))
        batch = self._batch()
        if batch.results and batch.key != key:
            self._submit(batch)
        with batch.lock:
            batch.key = key
            batch.results.append(result)
            batch.places.append(place + kinds)
            full = len(batch.results) >= kBatch
        if full:
            self._submit(batch)

    def flush(self) -> None:
        """Hands every thread's batch over and returns once all are in the
        rings."""
        with self._lock:
            batches = list(self._batches)
        for batch in batches:
            self._submit(batch)
        if self._thread is not None:
            self._queue.join()

    def _batch(self) -> _Batch:
        batch = getattr(self._local, "batch", None)
        if batch is None:
            batch = self._local.batch = _Batch()
            with self._lock:
                self._batches.append(batch)
        return batch

    def _submit(self, batch: _Batch) -> None:
        with batch.lock:
            results, places, key = batch.results, batch.places, batch.key
            batch.results, batch.places = [], []
        if not results:
            return
        summary, stream = key
        reducer = self._reducers[summary]
        self._busy.busy += 1
        try:
            host, waiter = reducer.to_host(results, stream)
        finally:
            self._busy.busy -= 1
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="tprobe-stats", daemon=True)
                    self._thread.start()
        self._queue.put((reducer, host, waiter, b"".join(places)))

    def _run(self) -> None:
        while True:
            reducer, host, waiter, places = self._queue.get()
            self._busy.busy += 1
            try:
                if waiter is not None:
                    waiter()
                self._session.write_producer_stats(reducer.fetch(host),
                                                   places)
            except Exception:  # the daemon writes those tensors incomplete
                pass
            finally:
                self._busy.busy -= 1
                self._queue.task_done()


def host_bytes(tensor_ptr: int, nbytes: int) -> bytes:
    """The bytes at a host address (a CPU or pinned tensor's data_ptr())."""
    return ctypes.string_at(tensor_ptr, nbytes)


def install(session: Any, framework: str) -> None:
    """Sets the binding's statistics hook for `session` (one per process)."""
    try:
        if framework == "mindspore":
            from tprobe.mindspore import stats
            reducers = {"statistics": stats}
        else:
            from tprobe.torch import crc, stats
            reducers = {"statistics": stats, "xor": stats.XOR, "md5": crc}
    except ImportError:
        return
    producer = ProducerStats(session, reducers)
    _C.set_producer_stats(producer.hook, producer.flush,
                          mindspore_on_host=stats.on_host(),
                          summaries=list(reducers))
