"""Framework-neutral parts of tprobe's Python adapters (tprobe.torch,
tprobe.mindspore): the hook runtime, call stacks and session set-up."""
