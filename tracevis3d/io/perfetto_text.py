"""Texts and repairs of the Perfetto reader (`tracevis3d.io.perfetto`): byte spans of the file
decoded once per distinct string, the repairs' table and record, the error message of a
damaged file, the names of Chrome's process types."""
from __future__ import annotations

import numpy as np

from ..kernels import jsonspans as jsp
from ..kernels import perfetto_layout as pl
from ..kernels.perfetto_wire import ERROR_TEXT, E_TOO_MANY
from ..model import TraceFormatError
from .chrome import _Text

REPAIRS = {
    "lanes_capped": "threads past max_lanes_read (max_lanes_read= to allow more): those of the fewest events share "
                    "one lane 'other threads'",
    "truncated": "the file ends inside a packet (cut short): kept every complete packet before it",
    "needs_state": "packets that need their sequence's incremental state (interned data) while it was lost or "
                   "never set (SEQ_NEEDS_INCREMENTAL_STATE before the sequence was cleared): skipped them, as "
                   "trace processor does",
    "undefined_name": "event name_iid that its sequence never interned: named the slice \"(unknown name)\"",
    "undefined_category": "category iid that its sequence never interned: no category",
    "undefined_arg": "debug annotation name or string value iid never interned: an empty key / null value",
    "undefined_source": "source_location_iid never interned: no file and line",
    "no_sequence": "TrackEvent without trusted_packet_sequence_id: dropped it",
    "no_clock": "time on a sequence clock (64-127) that no ClockSnapshot of the sequence defined: dropped the event",
    "bad_time": "time beyond the range of a 64-bit count of nanoseconds (or of max_abs_time=): dropped the event",
    "no_time": "TrackEvent without a timestamp: dropped it",
    "no_reference": "timestamp_delta_us without a ThreadDescriptor's reference time on the sequence: dropped it",
    "no_track": "TrackEvent without a track (no track_uuid, no default, no thread descriptor): dropped it",
    "counter_no_value": "TYPE_COUNTER event without a value or without a counter track: dropped it",
    "extra_counters": "extra counter values without as many track uuids: dropped the values without one",
    "deep_args": "debug annotations nested deeper than max_args_nesting: dropped them",
    "big_args": "debug annotations longer than max_args_bytes as JSON: dropped them",
    "args_budget": "debug annotations past the reader's total budget (8 bytes of JSON per byte of the file): "
                   "dropped them",
    "bad_args": "debug annotation whose legacy_json_value is not JSON Python reads: dropped the event's args",
    "compressed_packets": "compressed_packets bundles (the trace written with compression): not read, skipped them",
    "chrome_proto_events": "chrome_events holding ChromeTraceEvent protos or ftrace text: not read, skipped them",
    "track_no_uuid": "TrackDescriptor without uuid: ignored it",
    "track_cycle": "TrackDescriptors whose parent_uuid links form a cycle: cut the cycle (that track has no parent)",
    "unknown_track": "events on a track_uuid no TrackDescriptor describes: kept them on a track of their own",
    "clock_unrelated": "times on a clock no ClockSnapshot relates to the trace clock: dropped those events",
    "out_of_order": "a track's timestamps going backwards in the file: sorted its events by time (stable)",
    "end_unmatched": "TYPE_SLICE_END with no open slice on its track: dropped it",
    "unclosed": "TYPE_SLICE_BEGIN never ended: closed it at its track's last timestamp",
    "overlap": "slice sticking out of its enclosing slice on the same thread: clipped its end to the parent's end",
    "overlap_dropped": "slice sticking out of its enclosing slice on the same thread: dropped it",
    "negative_dur": "legacy complete event (X) without a duration, or with a negative one: used 0",
    "counter_not_counter_track": "TYPE_COUNTER values on a track that is no counter track: dropped them",
    "flow_unbound": "flow end on an event that is no slice of a thread (or a thread instant outside every slice): "
                    "dropped the flows through it",
    "async_unmatched_end": "async end with no open async slice on its track: dropped it",
    "async_unclosed": "async begin never ended: closed it at its track's last timestamp",
    "bad_utf8": "name that is not valid UTF-8: replaced the bad bytes with U+FFFD",
    "long_name": "name longer than max_name_chars: cut, and a hash of the whole name appended",
    "json_in_proto": "chrome_events' legacy JSON trace that the Chrome reader refused: skipped it",
}
#: the scanner's repair codes (`perfetto_layout.R_*`) → `REPAIRS` keys
SCAN_REPAIRS = {
    pl.R_NEEDS_STATE: "needs_state", pl.R_UNDEF_NAME: "undefined_name", pl.R_UNDEF_CAT: "undefined_category",
    pl.R_UNDEF_ARG: "undefined_arg", pl.R_UNDEF_SRC: "undefined_source", pl.R_NO_SEQ: "no_sequence",
    pl.R_NO_CLOCK: "no_clock", pl.R_BAD_TIME: "bad_time", pl.R_NO_TS: "no_time", pl.R_NO_REF: "no_reference",
    pl.R_NO_TRACK: "no_track", pl.R_COUNTER_NO_VALUE: "counter_no_value", pl.R_EXTRA_MISMATCH: "extra_counters",
    pl.R_DEEP_ARGS: "deep_args", pl.R_BIG_ARGS: "big_args", pl.R_ARGS_BUDGET: "args_budget",
    pl.R_COMPRESSED: "compressed_packets", pl.R_CHROME_OTHER: "chrome_proto_events",
    pl.R_TD_NO_UUID: "track_no_uuid",
}
_MESSAGES = {
    pl.MSG_TRACE: "the Trace (its packets)", pl.MSG_PACKET: "a TracePacket",
    pl.MSG_DEFAULTS: "a TracePacketDefaults", pl.MSG_INTERNED: "an InternedData", pl.MSG_EVENT: "a TrackEvent",
    pl.MSG_LEGACY: "a TrackEvent's LegacyEvent", pl.MSG_DESCRIPTOR: "a TrackDescriptor",
    pl.MSG_CLOCKS: "a ClockSnapshot", pl.MSG_ANNOTATION: "a DebugAnnotation", pl.MSG_CHROME: "a ChromeEventBundle",
    pl.MSG_THREAD: "a ThreadDescriptor", pl.MSG_PROCESS: "a ProcessDescriptor",
    pl.MSG_COUNTER: "a CounterDescriptor", pl.MSG_SOURCE: "a SourceLocation",
}
#: Chrome's process types (ChromeProcessDescriptor.process_type, ProcessDescriptor.chrome_process_type): a
#: process's name when its descriptors give none
CHROME_PROCESS_TYPES = {1: "Browser", 2: "Renderer", 3: "Utility", 4: "Zygote", 5: "Sandbox helper", 6: "GPU Process",
                        7: "PPAPI plugin", 8: "PPAPI broker"}


class Repairs:
    """The repairs of one load: code → {"count", "first", "action"} (`REPAIRS`)."""

    def __init__(self):
        self.items: dict = {}

    def add(self, code: str, count: int, first: str = "") -> None:
        if count <= 0:
            return
        it = self.items.setdefault(code, {"count": 0, "first": None, "action": REPAIRS[code]})
        it["count"] += int(count)
        if it["first"] is None and first:
            it["first"] = first


def packet_at(off: int) -> str:
    """How a repair cites the packet at byte ``off``."""
    return f"the packet at byte {int(off)}"


def scan_error(source: str, info, n_bytes: int, max_events: int) -> TraceFormatError:
    """The one-line error of a scan that stopped (``info``: `protoscan.scan_trace`'s)."""
    code = int(info[pl.I_STATUS])
    pos = int(info[pl.I_ERR_POS])
    if code == E_TOO_MANY:
        return TraceFormatError(f"{source}: more than {max_events} events (the packet at byte {pos} is one too many; "
                                f"max_events= to allow more)")
    what = ERROR_TEXT.get(code, f"error {code}")
    where = _MESSAGES.get(int(info[pl.I_ERR_MSG]), "a message")
    field = int(info[pl.I_ERR_FIELD])
    field_txt = f", field {field}" if field > 0 else ""
    return TraceFormatError(f"{source}: damaged or not a Perfetto protobuf trace: {what} at byte {pos} "
                            f"(in {where}{field_txt}; the file has {n_bytes} bytes)")


class SpanText:
    """Strings of the span table (`protoscan`: offset and length in the file): each distinct byte
    string decoded once (invalid UTF-8 replaced, long names cut: `chrome._Text`)."""

    def __init__(self, buf, sp_off, sp_len, max_name_chars: int, seed: int):
        self.buf = buf
        self.off = sp_off
        self.len = sp_len
        self.text = _Text(max_name_chars)
        self.seed = seed
        self.n_bad = 0
        self.first_bad = ""

    def decode(self, raw: bytes) -> str:
        try:
            s = raw.decode("utf-8")
        except UnicodeDecodeError:
            s = raw.decode("utf-8", "replace")
            self.n_bad += 1
            if not self.first_bad:
                self.first_bad = repr(raw[:80])
        return self.text.clean(s) if len(s) > self.text.max_chars else s

    def one(self, span: int, default: str = "") -> str:
        """The string of span ``span`` (``default`` for -1)."""
        if span < 0:
            return default
        o, ln = int(self.off[span]), int(self.len[span])
        if ln > self.text.raw_limit:
            return self.text.raw(bytes(self.buf[o: o + ln]))
        return self.decode(bytes(self.buf[o: o + ln]))

    def table(self, spans: np.ndarray, specials: dict) -> tuple[np.ndarray, list]:
        """(string id of each of ``spans``, the strings): equal byte strings share an id, the
        strings in order of first use; a negative span is ``specials[span]`` (its own id)."""
        spans = np.asarray(spans, np.int64)
        ids = np.full(spans.shape[0], -1, np.int64)
        strings: list = []
        index: dict = {}
        if spans.size == 0:
            return ids.astype(np.int32), strings
        n_sp = self.off.shape[0]
        used = np.zeros(n_sp + 1, bool)
        pos = spans >= 0
        used[spans[pos]] = True
        u = np.flatnonzero(used[:n_sp])
        sid = np.zeros(0, np.int32)
        if u.size:
            sid, first = jsp.intern_spans(self.buf, self.off[u], self.len[u], np.ones(u.size, bool), self.seed)
            # one decode per distinct byte string; equal decoded texts share an id
            remap = np.empty(first.shape[0], np.int64)
            for k, j in enumerate(first.tolist()):
                s = self.one(int(u[j]))
                r = index.get(s)
                if r is None:
                    r = index[s] = len(strings)
                    strings.append(s)
                remap[k] = r
            of_span = np.full(n_sp, -1, np.int64)
            of_span[u] = remap[sid]
            ids[pos] = of_span[spans[pos]]
        for code, s in specials.items():
            hit = spans == code
            if hit.any():
                r = index.get(s)
                if r is None:
                    r = index[s] = len(strings)
                    strings.append(s)
                ids[hit] = r
        return ids.astype(np.int32), strings
