"""The add-on's background process that prepares the kernels (`tracevis3d.kernel_cache.
start_background_warmup`): started by ``register()`` on a cold cache in the UI, asked about by
the panel (`running`: "Preparing kernels in the background"), ended by ``unregister()``."""
from __future__ import annotations

__all__ = ["start", "running", "stop"]

_PROCESS: dict = {"process": None}


def start(cache: str | None) -> None:
    """In the UI, on a cold cache: prepare the kernels in a background process (never headless:
    scripts and tests start their own work at once, and a process must not outlive them)."""
    import bpy

    if not cache or bpy.app.background:
        return
    from ..tracevis3d import kernel_cache

    if any(kernel_cache.is_cold(step, cache) for step in kernel_cache.STEP_KERNELS):
        _PROCESS["process"] = kernel_cache.start_background_warmup(cache)


def running() -> bool:
    """Is the background process preparing the kernels still at work?"""
    proc = _PROCESS["process"]
    return proc is not None and proc.poll() is None


def stop() -> None:
    """End the background process if it still runs (waits at most 2 s; never raises)."""
    proc = _PROCESS["process"]
    _PROCESS["process"] = None
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=2)
        except Exception:  # noqa: BLE001  never block unregistering
            pass
