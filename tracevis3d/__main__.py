"""``python -m tracevis3d render-icicle TRACE -o fig.png`` (needs the bpy module)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
