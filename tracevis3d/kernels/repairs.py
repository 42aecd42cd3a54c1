"""A repair counted where a kernel makes it: `note`.

Readers that repair what a file gets wrong (an end event with nothing open, a begin never
ended, a packet field of the wrong type) report how many of each repair they made and where
the first one was, so the warning can name the event or packet.  The kernels keep that as two
arrays indexed by the repair's code: its count and the position of its first occurrence (-1
while there is none).
"""
from numba import njit


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def note(rep_n, rep_at, code, at):
    """Count repair ``code`` at position ``at`` (the first one is kept)."""
    rep_n[code] += 1
    if rep_at[code] < 0:
        rep_at[code] = at
