"""The PrecisionDebugger lifecycle every framework shares (tprobe.torch,
tprobe.mindspore subclass DebuggerCore and add only what differs: which
hooks a level needs and how a model is hooked; their descriptor,
FRAMEWORK, says the rest, the rank included: tprobe._common.framework).

- Singleton: later constructions return the first instance and ignore
  their arguments. A bad config (level L2 included, which the config
  refuses) raises ValueError at construction and leaves no instance.
- Hooks follow the config. At construction and at each step boundary the
  hooks the level needs are installed (``_install``); a live config
  (``tprobe configure``) that changes the level adds what the new level
  needs. At the first start() after the last configured step every hook is
  removed and every patched function put back (``_remove``), so training
  goes on at full speed; a live config that names later steps, or a live
  directive (tprobe start/stop: Session.last_step is None while one is in
  force), puts them back at the next start(). Before that, a start() whose
  step records nothing suspends the hooks a framework can take out cheaply
  (``_suspend``: PyTorch's module and parameter-gradient hooks) and the
  next start() whose step records puts them back (``_resume``), so an
  undumped step runs at nearly full speed too.
- Steady steps: where a step is like the last one (not selected after one
  that was not, recorded after one that was) and nothing here would
  change, its start(), stop() and step() skip this class altogether
  (``_arm_steady``: tprobe._C.SteadySteps takes them to the session).
- Rank: read at construction and again at the first start(); when it
  changed (torch.distributed or mindspore.communication came up after the
  debugger) the session is made again for the new rank, as msprobe reads
  the rank at the first start().
- Fork: a forked child (a DataLoader worker) never writes into the
  parent's rings; its hooks go quiet (the client core drops what a child
  sends anyway, client/recorder.h InForkedChild).
- dump_enable: when config.json has the key, the file is looked at again
  at start(), stop() and step() on msprobe's schedule, and a start() while
  it says false starts nothing; its other changed fields are applied as a
  live config (tprobe._common.dump_enable).
- Warnings: each config.json key that tprobe accepts without effect is
  named once on stderr at construction (common/config/msprobe_keys.h).
- After construction nothing raises into training: start()'s own failures
  are reported once (Runtime.warn_once).
"""

import atexit
import os
import sys
import threading
from typing import Any, List, Optional

from tprobe import _C
from tprobe._common.debug_save import DebugSave
from tprobe._common.dump_enable import DumpEnable
from tprobe._common.framework import Framework
from tprobe._common.runtime import Runtime
from tprobe._common.session import config_with_overrides, new_session

# Levels whose hooks are module (cell) hooks, and those with API hooks.
MODULE_LEVELS = ("L0", "mix")
API_LEVELS = ("L1", "mix")


class DebuggerCore:
    """The base of each framework's PrecisionDebugger. A subclass sets
    FRAMEWORK (its adapter's descriptor, tprobe._common.framework) and
    implements the hooks below; its __init__ (with msprobe's signature)
    calls _setup, its start() calls _begin."""

    FRAMEWORK: Framework
    _instance: Optional["DebuggerCore"] = None  # set on each subclass
    _lock = threading.Lock()

    # --- what each framework implements --------------------------------

    def _make_hooks(self) -> None:
        """Creates the hook objects (none installed yet)."""
        raise NotImplementedError

    def _install(self) -> None:
        """Installs what self._rt.level needs at construction or a step
        boundary and is not installed yet (API hooks); idempotent."""
        raise NotImplementedError

    def _hook_model(self, model: Any) -> None:
        """Hooks `model` (the argument of start(), or the constructor's) as
        self._rt.level needs; once per model."""
        raise NotImplementedError

    def _remove(self) -> None:
        """Removes every hook and puts every patched function back."""
        raise NotImplementedError

    def _suspend(self) -> None:
        """Takes out, until _resume(), the hooks that only cost while no
        step records (the step that starts records nothing)."""

    def _resume(self) -> None:
        """Puts back what _suspend() took out (the step records)."""

    def _step_done(self) -> None:
        """Runs after each step() (state kept for one step is let go)."""

    def _after_start(self, model: Any) -> None:
        """Runs after each start(model) that took the debugger's own path
        (the framework's notices)."""

    def _steady_boundaries(self, records: bool) -> Optional[tuple]:
        """None where the framework's part of start(), stop() and step()
        may change something at the steps like this one (which records,
        or not); else the dicts whose size, should it change, sends a
        step() to the debugger's own path, so that SteadySteps may take
        the rest (``_arm_steady``). None unless the framework says
        otherwise."""
        return None

    def _make_debug_save(self) -> Optional[DebugSave]:
        """save()'s state at level debug (how the framework tells a tensor
        and hooks its gradient); None where save() is not supported."""
        return None

    # --- the shared lifecycle --------------------------------------------

    def __new__(cls, *args: Any, **kwargs: Any) -> "DebuggerCore":
        with cls._lock:
            if cls._instance is None:
                instance = super().__new__(cls)
                instance._ready = False
                # The boundaries of a step like the last one, in C
                # (tprobe._C.SteadySteps, binding/steady_steps.h): armed by
                # _arm_steady at a start(), disarmed by every other path.
                instance._steady = _C.SteadySteps()
                cls._instance = instance
            return cls._instance

    def _setup(self, config_path: Optional[str], task: Optional[str],
               dump_path: Optional[str], level: Optional[str],
               step: Optional[List[Any]], model: Any = None) -> None:
        """Makes the session (ValueError for a bad config, and no instance
        is left), the hooks the level needs, and the fork and exit hooks."""
        overrides = {k: v for k, v in
                     (("task", task), ("level", level), ("step", step))
                     if v is not None}
        self._overrides = overrides
        try:
            self._config = config_with_overrides(config_path, overrides)
            if self._config:
                for warning in _C.config_warnings(self._config):
                    sys.stderr.write(f"[tprobe] {warning}\n")
            self._dump_path = dump_path
            self._rank = self.FRAMEWORK.current_rank()
            session = new_session(self._config, dump_path, self._rank,
                                  self.FRAMEWORK)
            self._debug_save = self._make_debug_save()
            if session.level == "debug" and self._debug_save is None:
                session.close()
                raise ValueError(
                    f"level debug (save() into debug.json) is not supported "
                    f"by tprobe for {self.FRAMEWORK.name} yet")
        except ValueError:
            type(self)._instance = None
            raise
        self.model = model
        self._dump_enable = DumpEnable(config_path or "", self._check_file,
                                       self._apply_file)
        self._rt = Runtime(session, session.level)
        self._started = False
        self._hooked = True  # False once the configured steps are done
        self._suspended = False  # _suspend() ran, and no _resume() since
        self._warned_model = False
        self._warned_disabled = False
        self._make_hooks()
        self._install()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forked)
        atexit.register(self._close)
        self._ready = True

    def _check_file(self, path: str) -> None:
        """Validates a re-read config.json with the constructor's arguments
        written in, as the session would (ValueError when refused)."""
        _C.config_warnings(config_with_overrides(path, self._overrides))

    def _apply_file(self, path: str) -> str:
        """Gives a changed config.json (the constructor's arguments written
        in) to the session as a live config; "" or why it was not taken."""
        try:
            error = self._rt.session.configure(
                config_with_overrides(path, self._overrides))
        except ValueError as error:  # the file went bad since the check
            return str(error)
        self._rt.refresh()
        self._follow_level()
        return error

    # msprobe exposes these as class methods; they act on the instance.
    @classmethod
    def _get(cls) -> Optional["DebuggerCore"]:
        instance = cls._instance
        return instance if instance is not None and instance._ready else None

    @classmethod
    def _require(cls, what: str) -> "DebuggerCore":
        self = cls._get()
        if self is None:
            raise RuntimeError(f"{what}: create the PrecisionDebugger first")
        return self

    @classmethod
    def stop(cls) -> None:
        self = cls._instance
        if self is None or self._steady.stop() or not self._ready:
            return
        self._steady.disarm()
        self._rt.session.stop()
        self._rt.on = False  # no session collects after its stop()
        self._dump_enable.poll()

    @classmethod
    def step(cls) -> None:
        self = cls._instance
        if self is None or self._steady.step() or not self._ready:
            return
        self._steady.disarm()
        rt = self._rt
        self._flush_debug_save()
        # Before the step ends, so that a changed config.json is taken up
        # at this boundary, as msprobe reloads it after its step().
        self._dump_enable.poll()
        rt.session.step()
        rt.refresh()
        self._step_done()
        self._follow_level()

    def _follow_level(self) -> None:
        """A live config changed the level (at a step boundary): what the
        new level needs goes in now (module hooks at the next start() with
        a model). Hooks it does not use stay and record nothing (the session
        refuses their calls)."""
        rt = self._rt
        if rt.session.level != rt.level:
            rt.level = rt.session.level
            if self._hooked:
                self._install()

    @classmethod
    def set_init_step(cls, step: int) -> None:
        """Numbers the steps from ``step``: the next start() records into
        step{step}, and each step() counts on from there."""
        self = cls._require("set_init_step")
        self._steady.disarm()
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ValueError(f"set_init_step: step must be an integer >= 0, "
                             f"got {step!r}")
        self._rt.session.set_step(step)
        self._rt.refresh()
        self._follow_collecting()

    @classmethod
    def save(cls, variable: Any, name: str,
             save_backward: bool = True) -> None:
        """msprobe's save() writes only at its level "debug" (debug.json,
        tprobe._common.debug_save); at every other level msprobe ignores
        the call, and so does tprobe. A call with arguments msprobe refuses
        is skipped with a warning, as msprobe skips it. Nothing raises
        (failures are reported once)."""
        self = cls._require("save")
        session = self._rt.session
        if self._debug_save is None or session.level != "debug":
            return
        try:
            refusal = self._debug_save.refusal(variable, name, save_backward)
            if refusal is not None:
                sys.stderr.write(f"[tprobe] PrecisionDebugger.save: "
                                 f"{refusal}; this save is skipped\n")
                return
            self._debug_save.save(session, variable, name, save_backward)
        except Exception as error:  # noqa: BLE001
            self._rt.warn_once("PrecisionDebugger.save", error)

    def _flush_debug_save(self) -> None:
        """Writes save()'s gradient entries whose backward ran (save()
        records only at level debug, and a live level change comes after
        this flush in step())."""
        if self._debug_save is None or self._rt.level != "debug":
            return
        try:
            self._debug_save.flush(self._rt.session)
        except Exception as error:  # noqa: BLE001
            self._rt.warn_once("PrecisionDebugger.save", error)

    @property
    def session(self) -> _C.Session:
        """The underlying tprobe._C.Session (counters(), flush(), ...)."""
        return self._rt.session

    def _begin(self, model: Any) -> None:
        """start(model) once the framework checked its arguments; reports
        its own failures once and never raises."""
        self._steady.disarm()
        started = False
        try:
            self._dump_enable.poll()
            self._start(model)
            self._follow_collecting()
            started = True
        except Exception as error:  # noqa: BLE001
            self._rt.warn_once("PrecisionDebugger.start", error)
        self._after_start(model)
        if started:  # else each start() takes the debugger's path
            self._arm_steady(model)

    def _arm_steady(self, model: Any) -> None:
        """After start(model): while the steps are like this one (it
        records or not) and their start(model), stop() and step() would
        change nothing here (the hooks are in as the step records, no
        dump_enable is polled, the level is the session's, no debug.json
        is written, the framework agrees), SteadySteps takes them until
        one of them finds a step unlike it, or a new config
        (binding/steady_steps.h)."""
        rt = self._rt
        records = bool(rt.on)
        try:
            # start() tells the session of each start() without a model at
            # a module level (the step's why_empty).
            modelless = (model is None and self.model is None
                         and rt.level in MODULE_LEVELS)
            if (not self._started or not self._hooked or modelless
                    or self._suspended == records
                    or self._dump_enable.active or rt.level == "debug"
                    or rt.session.level != rt.level):
                return
            watched = self._steady_boundaries(records)
            if watched is not None:
                self._steady.arm(rt, model, watched)
        except Exception as error:  # noqa: BLE001
            self._steady.disarm()
            rt.warn_once("PrecisionDebugger.start", error)

    def _follow_collecting(self) -> None:
        """The hooks are in while the step records and suspended while it
        does not (whether it records is settled at start(), or by
        set_init_step(): stop(), step() and a live config or directive
        never turn recording on before the next start())."""
        if not self._hooked:
            return
        if self._rt.on:
            if self._suspended:
                self._suspended = False
                self._resume()
        elif not self._suspended:
            self._suspended = True
            self._suspend()

    def _start(self, model: Any) -> None:
        rt = self._rt
        if not self._started:
            self._started = True
            self._follow_rank()
        session = rt.session
        last = session.last_step
        if last is not None and session.current_step > last:
            session.start()  # logs that the configured steps are done
            rt.refresh()
            if self._hooked:
                self._hooked = False
                self._suspended = False
                rt.on = False
                self._remove()
            return
        if not self._hooked:
            # A live config named steps after the ones that were done.
            self._hooked = True
            self._install()
        model = model if model is not None else self.model
        if model is not None:
            self._hook_model(model)
        elif rt.level in MODULE_LEVELS:
            session.note_no_model()
            if not self._warned_model:
                self._warned_model = True
                sys.stderr.write("[tprobe] level %s needs a model: pass it "
                                 "to start(); no module or cell is dumped\n"
                                 % rt.level)
        if not self._dump_enable.enabled:
            # config.json's dump_enable is false: said once, for a step
            # the config would dump.
            if (not self._warned_disabled
                    and session.selects(session.current_step)):
                self._warned_disabled = True
                sys.stderr.write(
                    "[tprobe] config.json's dump_enable is false: start() "
                    "dumps nothing and no step folder is written until it "
                    "turns true (said once)\n")
            return
        session.start()
        rt.refresh()

    def _follow_rank(self) -> None:
        rank = self.FRAMEWORK.current_rank()
        if rank == self._rank:
            return
        rt = self._rt
        session = new_session(self._config, self._dump_path, rank,
                              self.FRAMEWORK)
        rt.session.close()
        rt.session = session
        self._rank = rank

    def _forked(self) -> None:
        self._steady.disarm()
        self._rt.on = False

    def _close(self) -> None:
        self._steady.disarm()
        rt = self._rt
        self._flush_debug_save()
        rt.on = False
        rt.session.close()
