"""The names the importer gives locals: never a keyword or a built-in of the
checker (the generated builtin_names.py), never one already used."""

import types
import unittest

import emitter
from builtin_names import BUILTINS


def fresh(*names, used=()):
    """What `ModelEmitter.fresh` makes of each of `names`, in turn."""
    state = types.SimpleNamespace(used_names=set(used))
    return [emitter.ModelEmitter.fresh(state, n) for n in names]


class BuiltinNamesTest(unittest.TestCase):
    def test_the_table_has_pytorchs_names_too(self):
        # Built-ins added for ports (a hand-written copy of the table lacked them).
        for name in ("cat", "chunk", "pad", "split", "clip", "masked_fill", "relu", "sum"):
            self.assertIn(name, BUILTINS)

    def test_only_names(self):
        for name in BUILTINS:
            self.assertRegex(name, r"^[a-z][a-z0-9_]*$")

    def test_a_local_is_never_named_after_a_builtin(self):
        self.assertEqual(fresh("cat", "split", "relu"), ["cat_", "split_", "relu_"])

    def test_nor_after_the_std_nn_import_or_a_keyword(self):
        self.assertEqual(fresh("nn", "model", "in"), ["nn_", "model_", "in_"])

    def test_other_names_stay_and_repeats_are_numbered(self):
        self.assertEqual(fresh("hidden", "hidden", "hidden"), ["hidden", "hidden_out", "hidden_out_2"])
        self.assertEqual(fresh("fc.0", "2x"), ["fc_0", "v2x"])


if __name__ == "__main__":
    unittest.main()
