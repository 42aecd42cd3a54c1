"""Layout of the buffers, records and function table that the compiled profile function
(`tracevis3d.live.native_hook`) writes and the stack kernel (`native_trace`) reads."""

# header slots of a thread's buffer (int64)
(W, CAP, DROPPED, ACTIVE, RECS, FN_GETCODE, FN_INCREF, FN_DECREF, FN_CLOCK, CLOCK_ID, TS_SEC, TS_NSEC,
 TAB, MASK, CF_TYPE, CM_TYPE) = range(16)
HEADER = 16
NF = 2                       # int64 fields per record
FIRST_CAP = 1 << 21          # records per buffer at start (32 MiB of address space, committed as touched; two per thread)
MAX_CAP = 1 << 23            # a buffer more than half full at a swap: the next is 4x (≤ 128 MiB)
GROWTH = 4
CALL, RETURN, C_CALL, C_EXCEPTION, C_RETURN = 0, 3, 4, 5, 6
WHAT_BITS = 7
OBJECT_FLAG = 8
FID_SHIFT = 4
TABLE_FIELDS = 3             # key1, key2, fid (fid < 0: empty)
