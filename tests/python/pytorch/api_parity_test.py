"""API parity with msprobe: tprobe hooks every API of msprobe's
support_wrap_ops.yaml that the installed torch has, or lists it in
api_list.SKIPPED with a reason; its copy of the names equals the installed
msprobe's list (checked where msprobe is installed: the project venv).
"""

import importlib.metadata
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import python_path  # noqa: E402

sys.path.insert(0, python_path())
import torch  # noqa: E402

from tprobe.torch import api_list  # noqa: E402
from tprobe.torch.api_hooks import ApiHooks, _owners, _resolve  # noqa: E402


def unhooked(groups: dict) -> list:
    """The names of ``groups`` that exist on this torch but are neither
    hooked by ApiHooks.install() nor in api_list.SKIPPED."""
    owners = _owners()
    originals = {}
    for prefix, names in groups.items():
        for name in names:
            target, attr = _resolve(owners[prefix][0], name)
            original = getattr(target, attr, None) if target else None
            if callable(original):
                originals[(prefix, name)] = original
    hooks = ApiHooks(rt=None)  # install() touches no session
    hooks.install()
    try:
        missing = []
        for (prefix, name), original in originals.items():
            target, attr = _resolve(owners[prefix][0], name)
            now = getattr(target, attr, None)
            hooked = getattr(now, "__wrapped__", None) is original
            if not hooked and f"{prefix}.{name}" not in api_list.SKIPPED:
                missing.append(f"{prefix}.{name}")
        return missing
    finally:
        hooks.restore()


class ApiParityTest(unittest.TestCase):
    def test_every_listed_name_on_this_torch_is_hooked_or_skipped(self) -> None:
        self.assertEqual(unhooked(api_list.groups()), [])

    def test_every_skip_has_a_reason(self) -> None:
        for name, reason in api_list.SKIPPED.items():
            self.assertTrue(reason.strip(), name)

    def test_the_conversions_msprobe_8_3_3_users_missed_are_hooked(self) -> None:
        hooks = ApiHooks(rt=None)
        hooks.install()
        try:
            for name in ("double", "float", "int", "long", "bool", "to",
                         "expand", "expand_as", "__ne__", "__lt__"):
                with self.subTest(name=name):
                    self.assertTrue(hasattr(getattr(torch.Tensor, name),
                                            "__wrapped__"))
        finally:
            hooks.restore()
        self.assertFalse(hasattr(torch.Tensor.double, "__wrapped__"))

    def test_a_name_the_hooks_miss_is_reported(self) -> None:
        # A name tprobe's hooks do not know (not in the list they install)
        # is reported: the check above cannot pass by accident.
        groups = {"Tensor": ["double"], "Torch": ["relu"]}
        saved = api_list.groups
        api_list.groups = lambda: {"Tensor": [], "Torch": ["relu"]}
        try:
            self.assertEqual(unhooked(groups), ["Tensor.double"])
        finally:
            api_list.groups = saved

    @unittest.skipUnless(api_list.installed_msprobe_yaml(),
                         "msprobe is not installed")
    def test_the_copy_equals_the_installed_msprobe_list(self) -> None:
        installed = api_list._from_yaml(api_list.installed_msprobe_yaml())
        version = importlib.metadata.version("mindstudio-probe")
        for prefix, names in api_list._COPY.items():
            with self.subTest(group=prefix, msprobe=version):
                self.assertEqual(sorted(set(installed[prefix]) - set(names)),
                                 [], "in msprobe, missing from the copy")
                self.assertEqual(sorted(set(names) - set(installed[prefix])),
                                 [], "in the copy, not in msprobe")
                self.assertEqual(names, installed[prefix])

    @unittest.skipUnless(api_list.installed_msprobe_yaml(),
                         "msprobe is not installed")
    def test_the_installed_msprobe_list_is_used(self) -> None:
        os.environ.pop("TPROBE_API_LIST", None)
        installed = api_list._from_yaml(api_list.installed_msprobe_yaml())
        self.assertEqual(api_list.groups(), installed)

    @unittest.skipUnless(api_list.installed_msprobe_yaml(),
                         "msprobe is not installed")
    def test_risk_levels_are_the_installed_msprobes(self) -> None:
        """risk_level: tprobe's risk of every name it hooks, and of every
        name msprobe lists as core or low-risk, is msprobe's (the torch_npu
        and MindSpeed names aside: tprobe hooks no such group)."""
        from msprobe.pytorch.dump.api_dump import api_risk_level as msprobe
        from tprobe import _C
        yaml_groups = api_list._from_yaml(api_list.installed_msprobe_yaml())
        import yaml
        with open(api_list.installed_msprobe_yaml()) as f:
            content = yaml.safe_load(f)
        npu = {name.rsplit(".", 1)[-1]
               for key in ("torch_npu", "mindspeed")
               for name in content.get(key, [])}
        names = {name for group in yaml_groups.values() for name in group}
        names |= (msprobe.CORE_API_SET | msprobe.LOW_RISK_API_SET) - npu
        wrong = {name: (_C.api_risk(name), msprobe.get_api_risk_level(name))
                 for name in sorted(names)
                 if _C.api_risk(name) != msprobe.get_api_risk_level(name)}
        self.assertEqual(wrong, {})
        self.assertEqual(_C.api_risk("view"), "LOW")


if __name__ == "__main__":
    unittest.main()
