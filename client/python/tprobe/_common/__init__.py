"""Framework-neutral parts of tprobe's Python adapters (tprobe.torch,
tprobe.mindspore): the debugger's lifecycle (debugger.py), the hook
runtime, walking a model's submodules, call stacks and session set-up.

An adapter plugs in by its descriptor (framework.py: its name, encoding,
reducers, rank and whether its tensors live on the host); nothing here
imports an adapter or tests a framework's name."""
