"""Errors the importer reports: one code, one message, where known the Python
line, and what to do about it. The modelc driver renders them like every
other diagnostic."""


class ImportError_(Exception):
    def __init__(self, code, message, location=None, label="", notes=(), help_text=""):
        super().__init__(message)
        self.code = code
        self.message = message
        self.location = location
        self.label = label
        self.notes = list(notes)  # [(message, location or None)]
        self.help_text = help_text

    def to_json(self):
        return {
            "status": "error",
            "code": self.code,
            "message": self.message,
            "location": self.location,
            "label": self.label,
            "notes": [{"message": m, "location": loc} for m, loc in self.notes],
            "help": self.help_text,
        }


# The codes (compiler/diagnostics/Diagnostics.def, docs/diagnostics/E07xx.md).
NO_TORCH = "E0700"
CANNOT_LOAD = "E0701"
NOT_A_MODULE = "E0702"
TRACE_FAILED = "E0703"
NO_EQUIVALENT = "E0704"
BAD_INPUT_SPEC = "E0705"


def unsupported(what, location, label="", notes=(), help_text=""):
    return ImportError_(NO_EQUIVALENT, "%s has no .mdl equivalent" % what, location, label, notes,
                        help_text)
