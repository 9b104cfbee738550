"""relmem shortens libgomp's idle spin before the extension loads it, unless the user chose a setting."""
import os
import subprocess
import sys

import pytest

SHOW = "import os, relmem; print(os.environ.get('GOMP_SPINCOUNT'))"


def spin_count_after_import(**settings):
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    env.update(settings)
    return subprocess.run([sys.executable, "-c", SHOW], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.parametrize("settings, expected", [
    ({}, "10000"),
    ({"GOMP_SPINCOUNT": "5"}, "5"),
    ({"OMP_WAIT_POLICY": "active"}, "None"),
])
def test_spin_count_default_yields_to_the_users_settings(settings, expected):
    assert spin_count_after_import(**settings) == expected
