"""Utility routines (SEAT Sec. 2.9.1.2): fan-in, fan-out and caller scatter in one score.

SEAT: "if a method has a high fan-in (the number of methods that call this method), low
fan-out (the number of methods called by this method) and is called from places
scattered throughout the system, then it can be a good candidate to be a utility" -- it
gives no formula.  We use Hamou-Lhadj & Lethbridge's utility factor (fan-in over the
number of routines, damped by a log fan-out term) and weight it by the scatter:

    N        = functions that occur in the trace (N ≥ 2)
    fan_in   = distinct functions that call f;   fan_out = distinct functions f calls
    scatter  = H(callers) / log N, H the Shannon entropy of f's calls over its callers
               (0 when one caller makes all calls, 1 when N callers share them evenly)
    score(f) = fan_in/N · log(N / (fan_out + 1)) / log N · (½ + ½·scatter), at least 0

so a function called by everything, calling nothing, evenly from everywhere scores near
1, and a function with one caller scores at most 1/N.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def utility_scores(caller, callee, count, n_func, present):
    """Scores from the call-graph edges ``caller[e] → callee[e]`` (distinct pairs, each
    made ``count[e]`` times).  ``present[f]`` marks the functions that occur.
    Returns ``(fan_in, fan_out, scatter, score)`` per function (module docstring)."""
    fan_in = np.zeros(n_func, np.int64)
    fan_out = np.zeros(n_func, np.int64)
    calls_in = np.zeros(n_func, np.float64)
    for e in range(caller.shape[0]):
        fan_in[callee[e]] += 1
        fan_out[caller[e]] += 1
        calls_in[callee[e]] += count[e]
    big_n = 0
    for f in range(n_func):
        if present[f]:
            big_n += 1
    ent = np.zeros(n_func, np.float64)
    for e in range(caller.shape[0]):
        p = count[e] / calls_in[callee[e]]
        ent[callee[e]] -= p * np.log(p)
    scatter = np.zeros(n_func, np.float64)
    score = np.zeros(n_func, np.float64)
    if big_n < 2:
        return fan_in, fan_out, scatter, score
    log_n = np.log(big_n)
    for f in range(n_func):
        scatter[f] = ent[f] / log_n
        s = fan_in[f] / big_n * np.log(big_n / (fan_out[f] + 1.0)) / log_n * (0.5 + 0.5 * scatter[f])
        score[f] = s if s > 0.0 else 0.0
    return fan_in, fan_out, scatter, score
