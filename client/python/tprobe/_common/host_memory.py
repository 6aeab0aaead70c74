"""Reading host memory by address, for the adapters' reductions: a module of
its own so that an adapter never imports the statistics core that imports
it (_common/producer_stats.py)."""
import ctypes


def host_bytes(tensor_ptr: int, nbytes: int) -> bytes:
    """The bytes at a host address (a CPU or pinned tensor's data_ptr())."""
    return ctypes.string_at(tensor_ptr, nbytes)
