"""The layout of the Perfetto scanner's tables (`protoscan`): column and field indices, type and
kind codes, error positions, repair codes.  Plain Python (no numba): the reader
(`tracevis3d.io.perfetto`) reads the tables by these names."""

# ---- event rows (`ev[C_*, i]`)
C_OFF = 0  # byte offset of the packet
C_TS = 1  # time in ns on clock C_CLK
C_CLK = 2  # clock key: 0 the trace clock, 1-63/128+ a machine clock, (seq + 1) << 8 | id a sequence clock
C_SEQ = 3  # sequence index (into `sq`)
C_TRACK = 4  # track uuid (K_UUID), pid (K_THREAD), legacy id (async legacy events)
C_NAME = 5  # span index of the name, -1 none, -2 an interned id never defined
C_CAT = 6  # span index of the (first) category, -1 none, -2 undefined
C_ARGS = 7  # args entry (into `aptr`), -1 none
C_BITS = 8  # B_* fields
C_AUX = 9  # row of `ax`, -1 none
N_C = 10
# bit fields of C_BITS
B_TYPE = 0  # 4 bits: T_*
B_TKIND = 4  # 2 bits: K_*
B_HAS_VALUE = 6
B_INT_VALUE = 7
B_PHASE = 8  # 8 bits: the legacy phase character (0 none)
B_ISCOPE = 16  # 2 bits: legacy instant scope (1 global, 2 process, 3 thread)
B_IDKIND = 18  # 2 bits: legacy id kind (1 unscoped, 2 local, 3 global)
B_NCAT = 20  # 8 bits: number of categories (capped at 255)
# event types (TrackEvent.Type, then the legacy phases that have no type of their own)
T_BEGIN = 1
T_END = 2
T_INSTANT = 3
T_COUNTER = 4
T_COMPLETE = 10
T_ASYNC_BEGIN = 11
T_ASYNC_END = 12
T_ASYNC_INSTANT = 13
# track kinds
K_UUID = 0
K_THREAD = 1  # (pid C_TRACK, tid AX_TID): the legacy ThreadDescriptor's thread or the pid/tid overrides
# ---- aux rows (`ax[AX_*, j]`): what only some events have
AX_TID = 0
AX_DUR = 1  # legacy X duration (ns), -1 none
AX_ID = 2  # legacy async id
AX_SCOPE = 3  # span of the legacy id_scope, -1 none
AX_SRC = 4  # source location row (into `sl`), -1 none
N_AX = 5
# ---- flows (`fl[FL_*, k]`)
FL_ROW = 0
FL_ID = 1
FL_KIND = 2  # FK_*
FK_STEP = 0  # flow_ids: begins a flow or continues one
FK_END = 1  # terminating_flow_ids
FK_V1_OUT = 2  # legacy bind_id, FLOW_OUT
FK_V1_IN = 3  # legacy bind_id, FLOW_IN
FK_V1_INOUT = 4
# ---- track descriptors (`td[TD_*, k]`), and the legacy descriptor packets
TD_OFF = 0
TD_SEQ = 1
TD_UUID = 2
TD_PARENT = 3
TD_FLAGS = 4  # 1 has uuid, 2 has parent, 4 counter is incremental
TD_KIND = 5  # TK_*
TD_PID = 6
TD_TID = 7
TD_NAME = 8  # span: the track's name
TD_SUBNAME = 9  # span: thread_name / process_name
TD_CMD0 = 10  # span: the first cmdline entry
TD_CMDTYPE = 11  # span: the cmdline's --type=... entry
TD_CTYPE = 12  # counter type / chrome process or thread type
TD_CUNIT = 13
TD_CMULT = 14
TD_UNITNAME = 15  # span
TD_SORT = 16
N_TD = 17
TK_PLAIN = 0
TK_THREAD = 1
TK_PROCESS = 2
TK_COUNTER = 3
TK_LEGACY_THREAD = 4  # a packet's thread_descriptor (no uuid)
TK_LEGACY_PROCESS = 5  # a packet's process_descriptor
# ---- sequences (`sq[SQ_*, s]`)
SQ_ID = 0
SQ_GEN = 1
SQ_VALID = 2
SQ_DCLK = 3
SQ_DTRK_HAS = 4
SQ_DTRK = 5
SQ_XC_OFF = 6
SQ_XC_N = 7
SQ_XDC_OFF = 8
SQ_XDC_N = 9
SQ_LEG_OK = 10
SQ_LEG_PID = 11
SQ_LEG_TID = 12
SQ_LEG_TS = 13
N_SQ = 14
# ---- interned kinds
K_CAT = 1
K_NAME = 2
K_DANAME = 3
K_SRCLOC = 4
K_DASTR = 5
# ---- clocks
CLK_MONOTONIC = 3
CLK_BOOTTIME = 6
CLK_TRACE_FILE = 11
CK_RAW = 0
CK_MULT = 1
CK_INCR = 2
N_CK = 3
# ---- messages (where an error is), for the caller's words
MSG_TRACE = 0
MSG_PACKET = 1
MSG_DEFAULTS = 2
MSG_INTERNED = 3
MSG_EVENT = 4
MSG_LEGACY = 5
MSG_DESCRIPTOR = 6
MSG_CLOCKS = 7
MSG_ANNOTATION = 8
MSG_CHROME = 9
MSG_THREAD = 10
MSG_PROCESS = 11
MSG_COUNTER = 12
MSG_SOURCE = 13
# ---- info
I_STATUS = 0
I_ERR_POS = 1
I_ERR_MSG = 2
I_ERR_FIELD = 3
I_PACKETS = 4
I_PRIMARY = 5  # primary_trace_clock of the last snapshot that has one (-1 none)
I_TRUNC_POS = 6  # offset of the packet cut by the end of the file (-1 none)
I_SNAP_BOOT = 7  # a snapshot holds BOOTTIME (and none TRACE_FILE): the trace clock is BOOTTIME
I_SNAP_FILE = 8
I_N_SKIP_TYPE = 9  # events of other types (TYPE_STATE, ...), skipped
I_N_SKIP_PHASE = 10  # legacy events of other phases (C, s/t/f, M, ...), skipped
N_INFO = 12
# ---- repairs: counts and the first packet's offset
R_NEEDS_STATE = 0  # SEQ_NEEDS_INCREMENTAL_STATE on an invalid sequence: skipped
R_UNDEF_NAME = 1
R_UNDEF_CAT = 2
R_UNDEF_ARG = 3  # an annotation name or string value iid never defined
R_UNDEF_SRC = 4
R_NO_SEQ = 5  # a TrackEvent without trusted_packet_sequence_id: dropped
R_NO_CLOCK = 6  # a sequence clock no snapshot defined: dropped
R_BAD_TIME = 7  # a time past the int64 range of ns: dropped
R_NO_TS = 8  # a TrackEvent without a time: dropped
R_NO_REF = 9  # timestamp_delta_us without a ThreadDescriptor: dropped
R_NO_TRACK = 10  # (unused: an event without a track is on the global track, uuid 0)
R_COUNTER_NO_VALUE = 11  # TYPE_COUNTER without a value (or without a uuid): dropped
R_EXTRA_MISMATCH = 12  # extra counter values without as many uuids
R_DEEP_ARGS = 13
R_BIG_ARGS = 14
R_ARGS_BUDGET = 15  # args past the total budget: dropped
R_COMPRESSED = 16  # compressed_packets: not read
R_CHROME_OTHER = 17  # chrome_events' proto trace_events / ftrace text: not read
R_TD_NO_UUID = 18  # a TrackDescriptor without uuid: ignored
N_R = 20
# ---- the run's counters and requests (`q[Q_*]`)
Q_EV = 0
Q_AX = 1
Q_FL = 2
Q_XC = 3
Q_TD = 4
Q_CS = 5
Q_SNAP = 6
Q_SP = 7
Q_SL = 8
Q_JS = 9
Q_SQ = 10
Q_POOL = 11
Q_CK = 12
Q_GEN = 13
Q_LAST_SEQ_ID = 14
Q_LAST_SEQ = 15
Q_NEED_FL = 16  # RUN_ROOM: what the next packet may add to each table
Q_NEED_SP = 17
Q_NEED_SL = 18
Q_NEED_INT = 19
Q_NEED_CS = 20
Q_NEED_JS = 21
Q_NEED_POOL = 22
Q_ARG_A = 23  # RUN_ARGS: the TrackEvent whose args to write, its generation, packet and row
Q_ARG_B = 24
Q_ARG_GEN = 25
Q_ARG_PK = 26
Q_ARG_ROW = 27
N_Q = 28
RUN_DONE = 0  # the end of the trace, or an error (`info[I_STATUS]`)
RUN_ROOM = 1  # the tables need room for the next packet (`Q_NEED_*`)
RUN_ARGS = 2  # an event's debug annotations to write (`Q_ARG_*`); the packet is done
