"""The huge-page advice the kernel holds for a range of this process's memory, read from
/proc/self/smaps (the read's and the one-shot heap's judges: `io._PageCheck`,
`allocator.judge_heap_pages`)."""


def advice_over(lo: int, hi: int) -> list:
    """The ``VmFlags`` huge-page advice ('hg', 'nh' or '') of each mapping overlapping [lo, hi),
    in address order."""
    out, cur = [], None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split(None, 1)[0]
            if "-" in head and not head.endswith(":"):
                s, e = (int(x, 16) for x in head.split("-"))
                cur = s < hi and e > lo
            elif head == "VmFlags:" and cur:
                flags = line.split()[1:]
                out.append("nh" if "nh" in flags else "hg" if "hg" in flags else "")
    return out
