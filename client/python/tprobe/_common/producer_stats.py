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

import queue
import sys
import threading
from typing import Any, Dict, List, Optional, Tuple

from tprobe import _C
from tprobe._common.framework import Framework

# Tensors per batch: one stack, one copy and one event per batch. On a GPU a
# per-tensor event costs a few microseconds; at 64 its share is negligible,
# and the daemon holds at most a batch's entries behind the first.
kBatch = 64


class _Busy(threading.local):
    """The binding's per-thread busy counter: framework calls made here are
    not recorded as API calls."""
    busy = _C.busy_flag


class _Batch:
    """One thread's results of one reducer on one stream, not yet handed
    to the statistics thread."""

    def __init__(self, key: Tuple[str, Any]) -> None:
        self.lock = threading.Lock()
        # The reducer and the stream that computed them (None: host).
        self.key = key
        self.results: List[Any] = []
        self.places: List[bytes] = []
        self.nbytes = 0  # the "bytes" part: what its copies hold


# The reducers each summary mode runs, each sending a ProducerStats record
# per tensor: md5 writes the statistics and the CRC-32 of the bytes. Under
# tasks tensor and overflow_check ("tensor") the "bytes" part sends the
# tensor's bytes, copied to the host without waiting, as a ProducerBytes
# record and its chunks.
PARTS = {"statistics": ("statistics",), "xor": ("xor",),
         "md5": ("statistics", "crc"), "tensor": ("statistics", "bytes")}

# Host copies of the "bytes" part queued and not yet written, at most: a
# hook that would go beyond waits for the statistics thread (back-pressure,
# as the rings' policy block), so a trainer faster than the daemon cannot
# fill the host's memory with pinned copies.
kMaxBytesInFlight = 1 << 30


class ProducerStats:
    """Runs a session's reducers (its framework's load_reducers: "xor" and
    "crc" beside "statistics" where it has them; PARTS says which a summary
    mode runs): each has reduce(t) ->
    (result, kinds), stream_key(t), to_host(results, key) -> (host, waiter
    or None) and fetch(host) -> bytes (4 little-endian 8-byte values per
    tensor; for "bytes", (address, size) of each copy, and nbytes(result),
    the size of one copy)."""

    def __init__(self, session: Any, reducers: Dict[str, Any]) -> None:
        self._session = session
        self._reducers = reducers
        self._local = threading.local()
        self._busy = _Busy()
        self._batches: List[_Batch] = []
        self._lock = threading.Lock()
        self._queue: "queue.Queue" = queue.Queue()
        self._thread: Optional[threading.Thread] = None
        # Bytes of the "bytes" part handed to the statistics thread and not
        # written yet.
        self._in_flight = 0
        self._written = threading.Condition()

    def summaries(self) -> List[str]:
        """The summary modes whose every reducer is here."""
        return [summary for summary, parts in PARTS.items()
                if all(part in self._reducers for part in parts)]

    def hook(self, tensor: Any, place: bytes,
             summary: str = "statistics") -> None:
        """Queues the reductions of `tensor` for `summary`; `place` is the
        binding's 20 bytes that say where its Tensor record went."""
        for part in PARTS[summary]:
            reducer = self._reducers[part]
            result, kinds = reducer.reduce(tensor)
            batch = self._batch((part, reducer.stream_key(tensor)))
            nbytes = reducer.nbytes(result) if part == "bytes" else 0
            with batch.lock:
                batch.results.append(result)
                batch.places.append(place + kinds)
                batch.nbytes += nbytes
                full = len(batch.results) >= kBatch
            if full or batch.nbytes >= kMaxBytesInFlight // 4:
                self._submit(batch)
                self._wait_for_room()

    def flush(self) -> None:
        """Hands every thread's batch over and returns once all are in the
        rings."""
        with self._lock:
            batches = list(self._batches)
        for batch in batches:
            self._submit(batch)
        # queue.join(), but a statistics thread that died cannot hang the
        # step: what it left behind is written incomplete.
        done = self._queue.all_tasks_done
        while self._thread is not None and self._thread.is_alive():
            with done:
                if self._queue.unfinished_tasks == 0:
                    return
                done.wait(0.1)

    def _batch(self, key: Tuple[str, Any]) -> _Batch:
        batches = getattr(self._local, "batches", None)
        if batches is None:
            batches = self._local.batches = {}
        batch = batches.get(key)
        if batch is None:
            batch = batches[key] = _Batch(key)
            with self._lock:
                self._batches.append(batch)
        return batch

    def _wait_for_room(self) -> None:
        """Waits while the copies in flight exceed kMaxBytesInFlight (never
        on a dead statistics thread)."""
        with self._written:
            while (self._in_flight > kMaxBytesInFlight and
                   self._thread is not None and self._thread.is_alive()):
                self._written.wait(0.1)

    def _submit(self, batch: _Batch) -> None:
        with batch.lock:
            results, places, key = batch.results, batch.places, batch.key
            nbytes = batch.nbytes
            batch.results, batch.places, batch.nbytes = [], [], 0
        if not results:
            return
        part, stream = key
        reducer = self._reducers[part]
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
        with self._written:
            self._in_flight += nbytes
        self._queue.put((part, reducer, host, waiter, b"".join(places),
                         nbytes))

    def _run(self) -> None:
        while True:
            part, reducer, host, waiter, places, nbytes = self._queue.get()
            self._busy.busy += 1
            try:
                if waiter is not None:
                    waiter()
                write = (self._session.write_producer_bytes
                         if part == "bytes" else
                         self._session.write_producer_stats)
                write(reducer.fetch(host), places)
            except Exception as e:  # the daemon writes them incomplete
                _C.count_producer_stats_failure(places,
                                                f"{type(e).__name__}: {e}")
            finally:
                del host  # the copies go before the bound is relaxed
                with self._written:
                    self._in_flight -= nbytes
                    self._written.notify_all()
                self._busy.busy -= 1
                self._queue.task_done()


def install(session: Any, framework: Framework) -> None:
    """Sets the binding's statistics hook for `session` (one per process)
    with the reducers of `framework` (the adapter's descriptor)."""
    try:
        reducers = framework.load_reducers()
    except ImportError as e:
        # statistics_on then falls back to the daemon for every tensor.
        print(f"tprobe: the framework's reductions cannot be loaded ({e}); "
              "the daemon computes every statistic (statistics_on daemon)",
              file=sys.stderr)
        return
    producer = ProducerStats(session, reducers)
    _C.set_producer_stats(producer.hook, producer.flush,
                          tensors_on_host=framework.tensors_on_host(),
                          summaries=producer.summaries())
