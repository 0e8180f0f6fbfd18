import pytest

from tests import helpers


def pytest_configure(config):
    if not helpers.CRD_ROOT.is_dir():
        raise pytest.UsageError(f"shared CRDs not found at {helpers.CRD_ROOT}; set SHARED_DIR")


@pytest.fixture(scope="session")
def spec():
    return helpers.shipped_spec()


@pytest.fixture
def raw():
    return helpers.raw_spec()
