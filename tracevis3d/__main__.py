"""``python -m tracevis3d render-icicle TRACE -o fig.png`` (needs the bpy module)."""
import sys

from .cli import main

if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv and argv[0].startswith("render-") and argv[0] != "render-live":  # one-shot: see allocator
        from .allocator import tune_for_batch

        tune_for_batch()
    sys.exit(main(argv))
