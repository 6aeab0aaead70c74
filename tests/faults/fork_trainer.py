"""A PyTorch trainer that forks without exec (as a DataLoader worker does)
in the middle of its run: tests/faults/faults_test.py test_fork.

    fork_trainer.py CONFIG DUMP_PATH

Three steps; after the first, the child runs the model (the hooks fire in
it) and exits through the interpreter, which destroys the inherited tprobe
session. Prints "child exited N" and "child seconds S" (fork to exit).
"""

import os
import sys
import time

import torch

from tprobe.torch import PrecisionDebugger


def main() -> None:
    config, dump = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(),
                                torch.nn.Linear(8, 2))
    debugger = PrecisionDebugger(config_path=config, dump_path=dump)
    x = torch.randn(4, 8)
    for step in range(3):
        debugger.start(model)
        model(x).sum().backward()
        debugger.stop()
        debugger.step()
        if step == 0:
            begin = time.monotonic()
            child = os.fork()
            if child == 0:
                debugger.start(model)
                model(x).sum().backward()
                sys.exit(0)
            _, status = os.waitpid(child, 0)
            print(f"child exited {os.waitstatus_to_exitcode(status)}")
            print(f"child seconds {time.monotonic() - begin:.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
