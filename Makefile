# Two commands do all the set-up: `make synth` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check
IMAGE_TEST_REQS := $(sort $(wildcard images/*/requirements-test.txt))

.PHONY: synth check test validate install install-test clean help

help:
	@echo "make synth     generate base/, overlays/, controllers/ from platform.yaml"
	@echo "make check     fail if committed output differs from what the spec generates"
	@echo "make test      run the test suite (installs what it needs)"

$(VENV)/.generator: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e .
	touch $@

# torch is pinned to 2.13.0 (CPU build on this machine's disk) by the image
# requirement files; installed first so nothing pulls a CUDA build.
$(VENV)/.test: $(VENV)/.generator $(IMAGE_TEST_REQS)
	$(PIP) -e '.[test]'
	$(PIP) torch==2.13.0
	$(PIP) $(addprefix -r ,$(IMAGE_TEST_REQS))
	touch $@

install: $(VENV)/.generator
install-test: $(VENV)/.test

synth: $(VENV)/.generator
	$(PY) -m generator synth

check: $(VENV)/.generator
	$(PY) -m generator check

test: $(VENV)/.test
	$(PY) -m pytest

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
