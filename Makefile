# Two commands do all the set-up: `make synth` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check
IMAGE_TEST_REQS := $(sort $(wildcard images/*/requirements-test.txt))

.PHONY: synth check schema test validate crds install install-test clean help plan bench

help:
	@echo "make synth     generate base/, overlays/, controllers/ from platform.yaml"
	@echo "make check     fail if committed output differs from what the spec generates"
	@echo "make test      run the test suite (installs what it needs)"
	@echo "make validate  strict schemas + cross-object checks on every overlay (CRD_DIR=... for the CRDs)"
	@echo "make crds      download the pinned upstream CRDs into CRD_DIR (default build/crds; needs network)"
	@echo "make plan      replay scenarios/<profile>/*.yaml against overlays/<profile> (Kueue admission)"
	@echo "make bench     time synth, kustomize and validate as the platform grows; writes bench/results.md"

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
	$(PIP) matplotlib==3.11.2  # `generator plan --plot` and its tests
	touch $@

install: $(VENV)/.generator
install-test: $(VENV)/.test

# synth and check run Python with -O: the typeguard checks in jsii's generated
# classes are skipped (Node's jsii kernel checks every value again), a quarter
# of synth's CPU at scale. Their -O bytecode is compiled once, here; without it
# every run would recompile the 3.7 MB cdk8s-plus-33 module.
$(VENV)/.bytecode: $(VENV)/.generator
	$(PY) -O -c 'import sys, compileall, generator.cli, generator.platform; \
	  [compileall.compile_file(m.__file__, quiet=2) for m in list(sys.modules.values()) \
	   if (getattr(m, "__file__", None) or "").endswith(".py")]'
	touch $@

synth: $(VENV)/.bytecode
	$(PY) -O -m generator synth

check: $(VENV)/.bytecode
	$(PY) -O -m generator check

# The spec's JSON Schema is generated from the typed model (generator/spec/).
schema: $(VENV)/.generator
	$(PY) -m generator schema

test: $(VENV)/.test
	$(PY) -m pytest

# VALIDATE_ARGS="--format json" for CI; CRD_DIR (exported) picks the CRD root.
validate: $(VENV)/.generator
	$(PY) -m generator validate $(VALIDATE_ARGS)

# Downloads the CRD files pinned in schemas/versions.yaml (crdFiles), sha256-checked.
crds: $(VENV)/.generator
	$(PY) -m generator.validate.fetch $(or $(CRD_DIR),build/crds)

# PLAN_ARGS="--format markdown" for a pull-request comment; PLAN_PLOTS=DIR
# also draws DIR/<profile>--<scenario>.png (needs matplotlib).
plan: $(VENV)/.generator
	@set -e; for s in $(sort $(wildcard scenarios/*/*.yaml)); do \
	  p=$$(basename $$(dirname $$s)); n=$$(basename $$s .yaml); \
	  $(PY) -m generator plan overlays/$$p --scenario $$s $(PLAN_ARGS) \
	    $(if $(PLAN_PLOTS),--plot $(PLAN_PLOTS)/$$p--$$n.png); echo; done

# Timing, not a test: never part of `make test` (tests/test_bench.py smoke-runs it).
bench: $(VENV)/.bytecode
	$(PY) -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
