"""Framework-neutral parts of tprobe's Python adapters (tprobe.torch,
tprobe.mindspore): the debugger's lifecycle (debugger.py), the hook
runtime, walking a model's submodules, call stacks and session set-up."""
