"""Rank side: the program each rank process runs (`python -m rankcheck.verify.rank_main`).

It connects to the verifier, instruments torch.distributed, runs the user's script (as
`__main__`, with the script's directory first on sys.path and its own argv) or calls the user's
function, and reports how it ended. Its configuration is a JSON file named by
RANKCHECK_VERIFY_CONFIG; the rank identity comes from the torchrun-style environment.
"""

from __future__ import annotations

import faulthandler
import importlib
import importlib.util
import json
import os
import runpy
import signal
import sys
import traceback
from typing import Any, Callable, Optional

from rankcheck.verify.frames import trimmed_traceback
from rankcheck.verify.wire import Channel

EXIT_STOPPED = 75


def _die_with_parent(parent_pid: int) -> None:
    """If the verifier itself is killed, the kernel kills this rank too (Linux)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
        except Exception:
            pass
    if parent_pid and os.getppid() != parent_pid:
        os._exit(EXIT_STOPPED)  # the verifier was gone before we could ask to die with it


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    return 1


def _innermost_user_frame(exc: BaseException) -> Optional[list]:
    frames = trimmed_traceback(exc)["frames"]
    return frames[-1] if frames else None


def _import_file(path: str):
    """Import a .py file under its dotted name (so relative imports work), its package root on
    sys.path."""
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    parts = [os.path.splitext(filename)[0]]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
    if parts[-1] == "__init__":
        parts.pop()
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return importlib.import_module(".".join(parts))


def _resolve(spec: str) -> Callable:
    """`module:func` or `path/to/file.py:func`."""
    module_part, _, attr = spec.rpartition(":")
    if module_part.endswith(".py") or os.sep in module_part:
        module = _import_file(module_part)
    else:
        module = importlib.import_module(module_part)
    target: Any = module
    for piece in attr.split("."):
        target = getattr(target, piece)
    return target


def _fixture_arguments(fixture: str) -> tuple[tuple, dict]:
    if not fixture:
        return (), {}
    value = _resolve(fixture)()
    if value is None:
        return (), {}
    if isinstance(value, dict):
        return (), value
    if isinstance(value, (tuple, list)):
        return tuple(value), {}
    return (value,), {}


def _run_script(config: dict) -> None:
    path = config["path"]
    sys.argv = [path, *config["args"]]
    runpy.run_path(path, run_name="__main__")


def _run_function(config: dict) -> None:
    import torch.distributed as dist

    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    module = _import_file(config["path"])
    function = module
    for piece in config["function"].split("."):
        function = getattr(function, piece)
    owned = False
    if not dist.is_initialized():
        # The launcher ends every rank at its own deadline (verify.launcher): no group timeout needed.
        dist.init_process_group("gloo")  # rankcheck: ignore[RC201]
        owned = True
    args, kwargs = _fixture_arguments(config.get("fixture", ""))
    function(*args, **kwargs)
    if owned and dist.is_initialized():
        dist.destroy_process_group()


def _run_plain(config: dict) -> int:
    """The uninstrumented baseline (the benchmark's torchrun-style run)."""
    if config.get("pg_timeout"):
        from rankcheck.verify.instrument import install_timeout_only

        install_timeout_only(float(config["pg_timeout"]))
    try:
        _run_script(config)
    except SystemExit as exc:
        return _exit_code(exc)
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def main() -> None:
    with open(os.environ["RANKCHECK_VERIFY_CONFIG"], encoding="utf-8") as handle:
        config = json.load(handle)
    rank = int(os.environ["RANK"])
    _die_with_parent(config.get("parent_pid", 0))
    if config["mode"] == "plain":
        sys.path[0] = os.path.dirname(config["path"])
        code = _run_plain(config)
        _flush()
        os._exit(code)

    if config["mode"] == "script":
        # As `python train.py` does: the script's directory first on sys.path (before torch is
        # imported, so the same local modules shadow the same names as in a real run).
        sys.path[0] = os.path.dirname(config["path"])
    channel = Channel(config["port"])
    channel.send({"t": "hello", "rank": rank, "pid": os.getpid()})
    stack_file = open(config["stack_file"].format(rank=rank), "w")
    faulthandler.register(signal.SIGUSR1, file=stack_file, all_threads=True)
    try:
        import torch
        import torch.distributed  # noqa: F401
    except ImportError as exc:
        channel.send({"t": "done", "rank": rank, "state": "no-torch", "message": str(exc)})
        _flush()
        os._exit(3)

    from rankcheck.verify import flight, instrument, substitute
    from rankcheck.verify.linewatch import LineWatcher

    def take_flight():
        return flight.take()

    def final_flight() -> tuple[list, str]:
        if recorder.flight_before_destroy is not None:
            return recorder.flight_before_destroy
        return take_flight()

    def on_stop(verifier_gone: bool) -> None:
        # The verifier saw a divergence and holds this rank before the collective: report what
        # this rank saw, then leave at once (it never enters the collective that would hang).
        watcher.stop()
        if not verifier_gone:
            entries, note = final_flight()
            channel.send(
                {
                    "t": "stopped",
                    "rank": rank,
                    "lines": watcher.snapshot(),
                    "flight": entries,
                    "flight_note": note,
                }
            )
        _flush()
        os._exit(EXIT_STOPPED)

    recorder = instrument.Recorder(channel, rank, instrument.world_size_from_env(), on_stop)
    watcher = LineWatcher(config.get("watch", {}), lambda: recorder.seq)
    recorder.snapshot_lines = watcher.snapshot
    instrument.install(recorder, take_flight)
    try:
        from rankcheck.verify import ddp

        ddp.install(recorder)
    except ImportError:  # a torch without DDP's comm hooks: its C++ collectives go unseen
        pass
    substitute.install(recorder.note, rewrite_devices=bool(config.get("mentions_cuda", True)))

    message: dict[str, Any] = {"t": "done", "rank": rank}
    code = 0
    watcher.start()
    try:
        if config["mode"] == "function":
            _run_function(config)
        else:
            _run_script(config)
        message["state"] = "finished"
    except SystemExit as exc:
        watcher.stop()
        code = _exit_code(exc)
        message.update(state="exited", exit_code=code, site=_innermost_user_frame(exc))
    except BaseException as exc:
        watcher.stop()
        code = 1
        error = trimmed_traceback(exc)
        tb = traceback.extract_tb(exc.__traceback__)
        innermost = tb[-1].filename if tb else ""
        error["gpu_only"] = substitute.needs_gpu(type(exc).__name__, str(exc), innermost)
        message.update(state="raised", exit_code=code, error=error, site=_innermost_user_frame(exc))
        # The user still sees their traceback in the rank's output, as with torchrun.
        traceback.print_exc()
    finally:
        watcher.stop()
    entries, note = final_flight()
    message.update(
        lines=watcher.snapshot(),
        flight=entries,
        flight_note=note,
        collectives=recorder.seq,
        notes=recorder.notes,
    )
    _flush()
    # Stay until the verifier lets us go: leaving at once could break a peer's collective that
    # is still in flight with this rank, and hide the divergence behind a connection error.
    channel.request(message)
    os._exit(code)


if __name__ == "__main__":
    main()
