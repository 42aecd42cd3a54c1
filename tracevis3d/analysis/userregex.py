"""User regexes matched in linear time: moved to `tracevis3d.userregex` (the base layer, where
the kind rules and the parameter checks use them); this name stays for existing imports."""
from ..userregex import MAX_NFA_STATES, MAX_PATTERN_CHARS, WORK_BUDGET, UserPattern, check_user_regex, user_regex

__all__ = ["UserPattern", "user_regex", "check_user_regex", "MAX_NFA_STATES", "WORK_BUDGET", "MAX_PATTERN_CHARS"]
