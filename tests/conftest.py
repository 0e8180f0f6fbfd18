"""The generator's test suite (`make test-generator`). tests/images/ runs in
its own virtual environment (`make test-images`, with torch, JAX and
TorchServe) and is not collected here."""
import os
import sys

import pytest

from generator.kernel import upstream
from tests import helpers

collect_ignore = ["images"]

# The shipped spec, scenarios/ and the committed output are the user's: a test
# that opens one fails (tests/helpers.SHIPPED; tests read tests/fixtures/). An
# audit hook sees every open() and directory listing in this process; what a
# test runs in a subprocess is covered by tests/test_docs.py, which runs part of
# the suite in a copy of the repository without them.
_EVENTS = frozenset({"open", "os.listdir", "os.scandir"})
_opened_shipped: list[str] = []
_ROOT = str(helpers.ROOT) + os.sep


def _audit(event: str, args: tuple) -> None:
    if event not in _EVENTS or not args:
        return
    path = args[0]
    if isinstance(path, int) or path is None:
        return
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return
    if not os.path.isabs(text) and event == "open" and args[1] is None:
        return   # os.open of a relative name: may be relative to a dir_fd (shutil.rmtree), not the working directory
    if (text.startswith(_ROOT) or not os.path.isabs(text)) and helpers.shipped_path(text):
        _opened_shipped.append(os.path.abspath(text))


sys.addaudithook(_audit)


@pytest.fixture(autouse=True)
def _never_the_shipped_files():
    _opened_shipped.clear()
    yield
    if _opened_shipped:
        shown = sorted({os.path.relpath(p, helpers.ROOT) for p in _opened_shipped})
        _opened_shipped.clear()
        pytest.fail(f"this test read {', '.join(shown)}: tests use tests/fixtures/ (and what they synthesize "
                    "from it), never the shipped spec, scenarios/ or the committed output", pytrace=False)


def pytest_configure(config):
    # Stop before collecting anything when upstream data is missing, with the
    # line `make test` prints (it fetches the data first when it can).
    missing = upstream.not_present(helpers.SHARED)
    if missing:
        raise pytest.UsageError(
            f"upstream data: {len(missing)} pinned files missing or different under {helpers.SHARED} "
            f"(first: {missing[0].rel}); run `make crds`, or put the shared data folder at "
            f"{upstream.shared_dir()} (or set {upstream.SHARED_ENV})")


@pytest.fixture(scope="session")
def spec():
    return helpers.fixture_spec()


@pytest.fixture
def raw():
    return helpers.fixture_raw()
