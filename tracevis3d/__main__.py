"""``python -m tracevis3d render-icicle TRACE -o fig.png`` (needs the bpy module)."""
import sys

from .cli import console

if __name__ == "__main__":
    sys.exit(console(sys.argv[1:]))
