"""The checked-in MindSpore API table (tprobe/mindspore/api_list.py) is the
installed msprobe's support_wrap_ops.yaml: the same names per section, in
the same order, apart from entries that are no (dotted) Python name."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import python_path  # noqa: E402

sys.path.insert(0, python_path())


class ApiListTest(unittest.TestCase):
    def test_table_is_the_installed_msprobe_list(self) -> None:
        try:
            import msprobe
            import yaml
        except ImportError:
            self.skipTest("msprobe is not installed")
        from tprobe.mindspore import api_list
        path = os.path.join(os.path.dirname(msprobe.__file__), "mindspore",
                            "dump", "dump_processor", "hook_cell",
                            "support_wrap_ops.yaml")
        with open(path, encoding="utf-8") as f:
            table = yaml.safe_load(f)
        self.assertEqual(set(table), set(api_list.YAML_SECTIONS.values()))
        for group, section in api_list.YAML_SECTIONS.items():
            names = [n for n in table[section]
                     if all(p.isidentifier() for p in n.split("."))]
            self.assertEqual(getattr(api_list, group), names, section)


if __name__ == "__main__":
    unittest.main()
