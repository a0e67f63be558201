"""The package as pip installs it (python_pip_install, label package): run
only by that test, with REDLOCK_INSTALLED_PACKAGE set to the virtual
environment's prefix. Skipped in python_tests, which imports the binding
from the build tree."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

PREFIX = os.environ.get("REDLOCK_INSTALLED_PACKAGE")

pytestmark = pytest.mark.skipif(
    not PREFIX, reason="checks a pip-installed package (python_pip_install sets this)")


def test_the_package_comes_from_the_environment_with_its_stubs_and_marker():
    import redlock_quorum
    from redlock_quorum import _native

    package = Path(redlock_quorum.__file__).resolve().parent
    assert Path(sys.prefix).resolve() == Path(PREFIX).resolve()
    assert Path(PREFIX).resolve() in package.parents, package
    assert Path(_native.__file__).resolve().parent == package
    assert (package / "py.typed").is_file()
    assert (package / "__init__.pyi").is_file()


def test_the_installed_package_takes_and_releases_a_lock(nodes, addresses):
    import redlock_quorum

    with redlock_quorum.Client(nodes=addresses, release_at_majority=False) as client:
        with client.lock("installed", fenced=True) as guard:
            assert guard.valid
            assert guard.fence is not None and guard.fence > 0
            for node in nodes:
                assert guard.value.encode() in node.command("GET", "redlock:lock:installed")
        for node in nodes:
            assert node.command("EXISTS", "redlock:lock:installed") == b":0\r\n"
