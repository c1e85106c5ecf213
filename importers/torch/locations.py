"""Where in the user's Python source something happened.

A location is a dict {"file", "line", "col", "end_col"}: `line` 1-based,
`col`/`end_col` 0-based UTF-8 byte offsets into that line (Python's own
co_positions), or None when only the line is known.
"""

import os
import sys
import traceback

import torch

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_PYTHON_LIB_DIR = os.path.dirname(os.path.abspath(os.__file__)) + os.sep
_IMPORTER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def is_library_file(filename):
    """Whether `filename` is torch's, Python's or the importer's own code."""
    if not filename or filename.startswith("<"):
        return True
    path = os.path.abspath(filename)
    return path.startswith((_TORCH_DIR, _PYTHON_LIB_DIR, _IMPORTER_DIR))


def called_from_library(depth=2):
    """Whether the caller of the function calling this is library code."""
    return is_library_file(sys._getframe(depth).f_code.co_filename)


def frame_location(frame, lasti=None):
    code = frame.f_code
    line = frame.f_lineno
    col = end_col = None
    if lasti is None:
        lasti = frame.f_lasti
    try:
        positions = list(code.co_positions())
        start_line, end_line, start, end = positions[lasti // 2]
        if start_line == line and start is not None:
            col = start
            end_col = end if end_line == line else None
    except (AttributeError, IndexError, ValueError):
        pass
    return {"file": os.path.abspath(code.co_filename), "line": line, "col": col,
            "end_col": end_col}


def user_location():
    """The innermost frame of user code on the current stack, or None."""
    frame = sys._getframe(1)
    while frame is not None:
        if not is_library_file(frame.f_code.co_filename):
            return frame_location(frame)
        frame = frame.f_back
    return None


def exception_location(exc):
    """The innermost user-code frame of `exc`'s traceback, or None."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        if not is_library_file(tb.tb_frame.f_code.co_filename):
            found = frame_location(tb.tb_frame, tb.tb_lasti)
            found["line"] = tb.tb_lineno
        tb = tb.tb_next
    if found is None and isinstance(exc, SyntaxError) and exc.filename:
        col = (exc.offset - 1) if exc.offset else None
        found = {"file": os.path.abspath(exc.filename), "line": exc.lineno or 1, "col": col,
                 "end_col": None}
    return found


def source_line(location):
    """The text of the line at `location` (without its newline), or ""."""
    try:
        with open(location["file"], encoding="utf-8") as source:
            for number, text in enumerate(source, 1):
                if number == location["line"]:
                    return text.rstrip("\n")
    except OSError:
        pass
    return ""


def source_text(location):
    """The exact text `location` spans, when its columns are known."""
    line = source_line(location)
    if location.get("col") is None:
        return line.strip()
    encoded = line.encode("utf-8")
    end = location["end_col"] if location.get("end_col") is not None else len(encoded)
    return encoded[location["col"]:end].decode("utf-8", "replace")


def short_traceback(exc):
    if isinstance(exc, SyntaxError):
        return "%s: %s" % (type(exc).__name__, exc.msg)
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()
