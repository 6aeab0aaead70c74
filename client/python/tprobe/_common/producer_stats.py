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
from typing import Any, List, Optional

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
        self.key: Any = None  # the stream that computed them (None: host)
        self.results: List[Any] = []
        self.places: List[bytes] = []


class ProducerStats:
    """Runs `reducer` (tprobe.torch.stats or tprobe.mindspore.stats) for a
    session: reduce(t) -> (result, kinds), and where the framework can,
    reduce_xor(t) likewise; stream_key(t), to_host(results, key) -> (host,
    waiter or None), fetch(host) -> bytes."""

    def __init__(self, session: Any, reducer: Any) -> None:
        self._session = session
        self._reducer = reducer
        self._local = threading.local()
        self._busy = _Busy()
        self._batches: List[_Batch] = []
        self._lock = threading.Lock()
        self._queue: "queue.Queue" = queue.Queue()
        self._thread: Optional[threading.Thread] = None

    def hook(self, tensor: Any, place: bytes, xor: bool = False) -> None:
        """Queues the reductions of `tensor` (its xor checksum with `xor`);
        `place` is the binding's 20 bytes that say where its Tensor record
        went."""
        reduce = self._reducer.reduce_xor if xor else self._reducer.reduce
        result, kinds = reduce(tensor)
        key = self._reducer.stream_key(tensor)
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
        self._busy.busy += 1
        try:
            host, waiter = self._reducer.to_host(results, key)
        finally:
            self._busy.busy -= 1
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="tprobe-stats", daemon=True)
                    self._thread.start()
        self._queue.put((host, waiter, b"".join(places)))

    def _run(self) -> None:
        while True:
            host, waiter, places = self._queue.get()
            self._busy.busy += 1
            try:
                if waiter is not None:
                    waiter()
                self._session.write_producer_stats(
                    self._reducer.fetch(host), places)
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
            from tprobe.mindspore import stats as reducer
        else:
            from tprobe.torch import stats as reducer
    except ImportError:
        return
    stats = ProducerStats(session, reducer)
    _C.set_producer_stats(stats.hook, stats.flush,
                          mindspore_on_host=reducer.on_host(),
                          xor=hasattr(reducer, "reduce_xor"))
