"""The default kind rules of `tracevis3d.kinds`, as linear scans in numba.

Python's regular expressions are linear for those rules, but they spend tens
of nanoseconds per character and rule; a file of 10 MB of distinct names would
need seconds.  These kernels test the same rules at a few nanoseconds per
character, on all names at once.  The regular expressions stay the
specification (tests/test_hostile.py checks both agree, on generated and real
names).

Text: all names joined into one array of code points, ``starts[k]:starts[k+1]``
for name k.  Case-insensitive rules read the names lowered (with the four
letters Python's ``re`` folds onto ASCII letters -- İ ı ſ K -- mapped first, so
an ASCII literal matches exactly what ``(?i)`` matches).  ``word`` and ``space``
are per-code-point tables of ``\\w`` (``str.isalnum()`` or ``_``) and ``\\s``
(``str.isspace()``).  Literals are given as one code-point array and offsets.

The helpers (`_lit_at`, `_first_end_in_run`, `_y_at`, ...) are called, not inlined, and run
without reference counting (``_nrt=False``): a called helper that counts them raises and drops
each array argument's count on entry, two atomic operations per array per word (half of the
rules' time on 10^4-name tables).

Rule shapes (each name gets True when the rule matches somewhere in it):

* `match_xwy`: ``X \\w* ['.]? \\s* SEP? Y`` -- a word that contains an X, then
  maybe more of the word, then Y (right there, or after an optional quote or
  dot, spaces and an optional SEP: ``.``, or for ``sep_io`` also ``of '``); each Y
  may require a word boundary after it.  Plus an optional second form
  ``L \\w* Z``: literal L, then a word that contains Z.
* `match_sep_keyword`: ``(^|[\\s.:'_<]) K (\\b|_|\\()``.
* `match_anchored`: ``^K(\\(|$)`` (``$``: the end, or a newline that ends the name).
* `match_literals`: one of the literals occurs.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True, _nrt=False)
def _lit_at(t, p, end, lits, ptr, j):
    """Literal j occurs at t[p:]."""
    a = ptr[j]
    ln = ptr[j + 1] - a
    if p + ln > end:
        return False
    for q in range(ln):
        if t[p + q] != lits[a + q]:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _can_start(c, first):
    """Some literal of a set starts with code point c (``first``: a table over ASCII;
    every literal of the default rules is ASCII)."""
    return c < 128 and first[c]


@njit(cache=True, nogil=True, _nrt=False)
def _first_end_in_run(t, s, e, lits, ptr, first):
    """The smallest end of an occurrence of any literal inside t[s:e], or -1."""
    for p in range(s, e):
        if not _can_start(t[p], first):
            continue
        best = -1
        for j in range(ptr.shape[0] - 1):
            if _lit_at(t, p, e, lits, ptr, j):
                end_j = p + ptr[j + 1] - ptr[j]
                if best < 0 or end_j < best:
                    best = end_j
        if best >= 0:
            return best
    return -1


@njit(cache=True, nogil=True, _nrt=False)
def _y_at(t, q, end, word, ys, yptr, yb, yfirst):
    """Some Y occurs at q (followed by a non-word character or the end when yb)."""
    if q >= end or not _can_start(t[q], yfirst):
        return False
    for j in range(yptr.shape[0] - 1):
        if _lit_at(t, q, end, ys, yptr, j):
            stop = q + yptr[j + 1] - yptr[j]
            if not yb[j] or stop >= end or word[t[stop]] == 0:
                return True
    return False


@njit(cache=True, nogil=True, _nrt=False)
def _of_quote(t, p, end):
    """``of '`` at t[p:]."""
    return p + 4 <= end and t[p] == 111 and t[p + 1] == 102 and t[p + 2] == 32 and t[p + 3] == 39


@njit(cache=True, nogil=True)
def match_xwy(t, starts, word, space, xs, xptr, xfirst, ys, yptr, yb, yfirst, sep_io, ls, lptr, zs, zptr,
              zfirst):
    """Rule shape ``X\\w*['.]?\\s*SEP?Y`` (or ``L\\w*Z``) per name; O(characters)."""
    n = starts.shape[0] - 1
    out = np.zeros(n, np.bool_)
    dot = 46
    quote = 39
    for k in range(n):
        a = starts[k]
        b = starts[k + 1]
        hit = False
        p = a
        while p < b and not hit:
            if word[t[p]] == 0:
                p += 1
                continue
            s = p
            while p < b and word[t[p]] != 0:
                p += 1
            e = p  # the word t[s:e]
            e0 = _first_end_in_run(t, s, e, xs, xptr, xfirst)
            if e0 < 0:
                continue
            for q in range(e0, e):
                if _y_at(t, q, b, word, ys, yptr, yb, yfirst):
                    hit = True
                    break
                if sep_io and _of_quote(t, q, b) and _y_at(t, q + 4, b, word, ys, yptr, yb, yfirst):
                    hit = True  # "of '" can start inside the word: its "of" is word characters
                    break
            if hit:
                break
            # after the word: ['.]? \s* SEP? Y
            for skip in range(2):
                p1 = e + skip
                if skip == 1 and not (e < b and (t[e] == dot or t[e] == quote)):
                    continue
                w = p1
                while w < b and space[t[w]] != 0:
                    w += 1
                if _y_at(t, w, b, word, ys, yptr, yb, yfirst):
                    hit = True
                elif w < b and t[w] == dot and _y_at(t, w + 1, b, word, ys, yptr, yb, yfirst):
                    hit = True
                elif sep_io and _of_quote(t, w, b) and _y_at(t, w + 4, b, word, ys, yptr, yb, yfirst):
                    hit = True
                if hit:
                    break
        if not hit and lptr.shape[0] > 1:
            for p in range(a, b):
                if t[p] == ls[0] and _lit_at(t, p, b, ls, lptr, 0):
                    s = p + lptr[1] - lptr[0]
                    e = s
                    while e < b and word[t[e]] != 0:
                        e += 1
                    if e > s and _first_end_in_run(t, s, e, zs, zptr, zfirst) >= 0:
                        hit = True
                        break
        out[k] = hit
    return out


@njit(cache=True, nogil=True, inline="always")
def _match_somewhere(t, starts, word, space, ks, kptr, kfirst, keyword):
    """Per name: some literal occurs in it; with ``keyword``, only one that starts the name or
    follows one of ``\\s . : ' _ <`` and ends it or is followed by a non-word character, ``_``
    or ``(`` (`match_sep_keyword`; ``word`` and ``space`` are read only then)."""
    n = starts.shape[0] - 1
    out = np.zeros(n, np.bool_)
    for k in range(n):
        a = starts[k]
        b = starts[k + 1]
        for p in range(a, b):
            if not _can_start(t[p], kfirst):
                continue
            if keyword and p > a:
                c = t[p - 1]
                if not (space[c] != 0 or c == 46 or c == 58 or c == 39 or c == 95 or c == 60):
                    continue
            found = False
            for j in range(kptr.shape[0] - 1):
                if _lit_at(t, p, b, ks, kptr, j):
                    if not keyword:
                        found = True
                        break
                    stop = p + kptr[j + 1] - kptr[j]
                    if stop >= b or word[t[stop]] == 0 or t[stop] == 95 or t[stop] == 40:
                        found = True
                        break
            if found:
                out[k] = True
                break
    return out


@njit(cache=True, nogil=True)
def match_sep_keyword(t, starts, word, space, ks, kptr, kfirst):
    """Rule shape ``(^|[\\s.:'_<])K(\\b|_|\\()`` per name; O(characters x keywords)."""
    return _match_somewhere(t, starts, word, space, ks, kptr, kfirst, True)


@njit(cache=True, nogil=True)
def match_anchored(t, starts, ks, kptr):
    """Rule shape ``^K(\\(|$)`` per name (case as given)."""
    n = starts.shape[0] - 1
    out = np.zeros(n, np.bool_)
    for k in range(n):
        a = starts[k]
        b = starts[k + 1]
        for j in range(kptr.shape[0] - 1):
            if _lit_at(t, a, b, ks, kptr, j):
                stop = a + kptr[j + 1] - kptr[j]
                if stop == b or t[stop] == 40 or (stop == b - 1 and t[stop] == 10):
                    out[k] = True
                    break
    return out


@njit(cache=True, nogil=True)
def match_literals(t, starts, ls, lptr, lfirst):
    """Some literal occurs in the name."""
    return _match_somewhere(t, starts, lfirst, lfirst, ls, lptr, lfirst, False)
