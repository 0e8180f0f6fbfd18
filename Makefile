# `make synth` and `make test` do all the set-up. Two virtual environments:
# .venv (the generator, its tests' small extras) and .venv-images (torch,
# JAX, TorchServe for tests/images), so that `make synth` stays small.
PYTHON      ?= python3
VENV        ?= .venv
IMAGES_VENV ?= .venv-images
PY          := $(VENV)/bin/python
IPY         := $(IMAGES_VENV)/bin/python
# No --quiet: long installs show what they are doing.
PIP         := -m pip install --disable-pip-version-check
# torch's CPU build. On a normal Linux x86_64 machine PyPI's `torch` is the
# CUDA build (several GB); take the CPU one from PyTorch's index with
#   make test TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
# (this project's CI machine has the CPU wheel locally and needs nothing).
TORCH_INDEX_URL ?=
IMAGE_TEST_REQS := images/finetune/requirements-test.txt images/jax-slice-check/requirements-test.txt \
                   images/t5-torchserve/requirements-test.txt
# PYTEST_ARGS="-x -k quota" narrows a run.
PYTEST_ARGS ?=

.PHONY: help synth check schema test test-fast test-generator test-images lint upstream-data validate crds plan bench \
        images install install-test install-images docs docs-ref clean wheel

help:
	@echo "make synth      generate base/, overlays/, controllers/, argocd/ from platform.yaml"
	@echo "make check      fail if committed output differs from what the spec generates"
	@echo "make test       the whole test suite (installs what it needs, fetches upstream data once)"
	@echo "make test-fast  the same without the tests marked slow (real TorchServe, training runs, locust)"
	@echo "make lint       ruff and mypy over the code and tests (configuration in pyproject.toml)"
	@echo "make validate   strict schemas + cross-object checks on every overlay"
	@echo "make plan       replay scenarios/<profile>/*.yaml against overlays/<profile> (Kueue admission)"
	@echo "make images     build and push images/* to each profile's registry (IMAGE_BUILDER=docker|gcloud)"
	@echo "make crds       download the pinned upstream CRDs and test data into the per-user cache (sha256-checked)"
	@echo "make bench      time synth, kustomize and validate as the platform grows; writes bench/results.md"
	@echo "make docs       build the documentation site (MkDocs, strict: broken links fail) into build/site"
	@echo "make docs-ref   regenerate docs/reference/ (spec, validate rules, CLI) from the code"
	@echo "make wheel      build dist/gke_ml_platform-<version>-py3-none-any.whl (the installed command; docs/platform-repo.md)"

$(VENV)/.generator: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) $(PIP) --upgrade pip
	$(PY) $(PIP) -e .
	touch $@

# The generator's tests: pytest and lupa, matplotlib for `plan --plot`, and
# locust to run the load generator's locustfile for real; ruff, mypy and
# stubs for `make lint` (which type-checks against all of these).
$(VENV)/.test: $(VENV)/.generator images/t5-loadgen/requirements-test.txt
	$(PY) $(PIP) -e '.[test,lint]' -r images/t5-loadgen/requirements-test.txt matplotlib==3.11.2
	touch $@

# The image tests' venv: torch first (pinned, CPU build) so nothing pulls a CUDA build.
$(IMAGES_VENV)/.images: $(IMAGE_TEST_REQS)
	$(PYTHON) -m venv $(IMAGES_VENV)
	$(IPY) $(PIP) --upgrade pip
	$(IPY) $(PIP) $(if $(TORCH_INDEX_URL),--extra-index-url $(TORCH_INDEX_URL)) torch==2.13.0
	$(IPY) $(PIP) $(if $(TORCH_INDEX_URL),--extra-index-url $(TORCH_INDEX_URL)) $(addprefix -r ,$(IMAGE_TEST_REQS))
	touch $@

# The documentation site's generator (extra `docs`), beside the generator's own install.
$(VENV)/.docs: $(VENV)/.generator
	$(PY) $(PIP) -e '.[docs]'
	touch $@

install: $(VENV)/.generator
install-test: $(VENV)/.test
install-images: $(IMAGES_VENV)/.images

# synth and check run Python with -O: the typeguard checks in jsii's generated
# classes are skipped (Node's jsii kernel checks every value again), a quarter
# of synth's CPU at scale. Their -O bytecode is compiled once, here; without it
# every run would recompile the 3.7 MB cdk8s-plus-33 module.
$(VENV)/.bytecode: $(VENV)/.generator
	$(PY) -O -c 'import sys, compileall, generator.cli, generator.builders.tree; \
	  [compileall.compile_file(m.__file__, quiet=2) for m in list(sys.modules.values()) \
	   if (getattr(m, "__file__", None) or "").endswith(".py")]'
	touch $@

synth: $(VENV)/.bytecode
	$(PY) -O -m generator synth

check: $(VENV)/.bytecode
	$(PY) -O -m generator check

# The spec's JSON Schema is generated from the typed model (generator/model/).
schema: $(VENV)/.generator
	$(PY) -m generator schema

# Upstream CRDs and tutorial manifests: ../shared (or SHARED_DIR) when present,
# else the per-user cache (~/.cache/gke-ml-platform/upstream, or UPSTREAM_CACHE),
# filled from the pinned URLs when empty.
# Without either (and offline) this stops with one line saying what to do.
upstream-data: | $(VENV)/.generator
	@$(PY) -m generator.kernel.fetch_upstream --ensure

# Downloads every pinned upstream file of schemas/versions.yaml into the
# per-user cache (UPSTREAM_CACHE=DIR elsewhere; UPSTREAM_BASE_URL for a mirror):
# `gke-ml-platform crds --all`.
crds: | $(VENV)/.generator
	$(PY) -m generator.kernel.fetch_upstream

# Order matters: the data check fails fast, before the large installs. Both
# suites run (-k) even when the first fails; the exit status says if either did.
test: upstream-data $(VENV)/.test $(IMAGES_VENV)/.images
	$(MAKE) --no-print-directory -k test-generator test-images

test-fast: upstream-data $(VENV)/.test $(IMAGES_VENV)/.images
	$(MAKE) --no-print-directory -k test-generator test-images PYTEST_ARGS='-m "not slow" $(PYTEST_ARGS)'

test-generator: upstream-data $(VENV)/.test
	$(PY) -m pytest $(PYTEST_ARGS)

# tests/images has its own venv; --confcutdir keeps the generator suite's
# conftest (which imports the generator) out of it.
test-images: $(IMAGES_VENV)/.images
	$(IPY) -m pytest --confcutdir=tests/images tests/images $(PYTEST_ARGS)

# Versions pinned in setup.cfg (extra `lint`), rules in pyproject.toml. Runs in
# .venv alone: the images' runtimes (torch, JAX, ...) are typed as Any there.
lint: $(VENV)/.test
	@$(VENV)/bin/ruff check .
	@$(VENV)/bin/mypy
	@$(PY) tools/complexity.py --max 15

# VALIDATE_ARGS="--format json" for CI; CRD_DIR (exported) picks another CRD root.
validate: upstream-data
	$(PY) -m generator validate $(VALIDATE_ARGS)

# PLAN_ARGS="--format markdown" for a pull-request comment; PLAN_PLOTS=DIR
# also draws DIR/<profile>--<scenario>.png (needs matplotlib).
plan: $(VENV)/.generator
	$(PY) -m generator plan $(PLAN_ARGS) $(if $(PLAN_PLOTS),--plot $(PLAN_PLOTS))

# The project's own images (images/<key> for each `images.<key>` with a
# `name`), tagged from the spec and pushed to each profile's registry.
# IMAGE_BUILDER=docker (buildx, the default) or gcloud (Cloud Build);
# IMAGE_PLATFORM=linux/amd64 when this machine's architecture differs from
# the nodes'; IMAGES_ARGS=--dry-run prints the commands.
IMAGE_BUILDER ?= docker
IMAGE_PLATFORM ?=
images: $(VENV)/.generator
	$(PY) -m generator.images --builder $(IMAGE_BUILDER) $(if $(IMAGE_PLATFORM),--platform $(IMAGE_PLATFORM)) $(IMAGES_ARGS)

# docs/reference/ is generated from the code (the spec model, the rule registry,
# the CLI parsers); tests/test_docs.py fails when it is stale.
docs-ref: $(VENV)/.generator
	$(PY) -m generator.docsgen

# Strict: a warning (a broken relative link or anchor, a page left out of the nav) fails.
docs: $(VENV)/.docs
	$(PY) -m generator.docsgen --check
	$(VENV)/bin/mkdocs build --strict

# Timing, not a test: never part of `make test` (tests/test_bench.py smoke-runs it).
bench: $(VENV)/.bytecode
	$(PY) -m bench $(BENCH_ARGS)

# The wheel users install (`pip install dist/...whl` puts gke-ml-platform on PATH); it carries the
# data files the tool reads (setup.py). Nothing is published from here.
wheel:
	$(PYTHON) -m pip wheel --no-deps -w dist .

clean:
	rm -rf $(VENV) $(IMAGES_VENV) .pytest_cache build dist *.egg-info
