"""The generator's test suite (`make test-generator`). tests/images/ runs in
its own virtual environment (`make test-images`, with torch, JAX and
TorchServe) and is not collected here."""
import pytest

from generator import upstream
from tests import helpers

collect_ignore = ["images"]


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
