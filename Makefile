# The two commands of the README: `make reproduce` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install -q -c constraints.txt
OUT ?= reports/

.PHONY: test test-cpus test-gpu test-min reproduce reproduce-full lint bench clean

# A user's install (no extras) must run the CLI: a command once imported click, which only the
# dev venv had. Checked here, before the dev extras arrive (tests/test_dependencies.py scans
# every import against pyproject's dependencies).
$(VENV)/.stamp-run: pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PIP) -e .
	OMP_NUM_THREADS=1 $(VENV)/bin/hardsoft eval "P 'a'" --input ba --json > /dev/null
	OMP_NUM_THREADS=1 $(VENV)/bin/hardsoft language > /dev/null 2>&1; test $$? -eq 2
	touch $@

$(VENV)/.stamp-dev: $(VENV)/.stamp-run
	$(PIP) -e '.[dev,interop,notebook,sweep]'
	touch $@

# One torch thread per xdist worker: 2 workers x 2 threads on 2 cores ran 10-80x slower.
test: $(VENV)/.stamp-dev
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2 --dist loadfile

# The float-comparing tests (marked floatcmp) under each of MKL's code paths (MKL_CBWR: the
# kernels MKL picks, and so how a matrix product rounds) and each ATen CPU capability (torch's
# own vectorised kernels): a test that holds only with this CPU's kernels fails here. Each run
# first prints the path that took effect (MKL_VERBOSE's "CNR:" field, torch's capability).
# docs/errors.md "Float exactness on other CPUs".
CPU_PATHS ?= MKL_CBWR=AVX512 MKL_CBWR=AVX2 MKL_CBWR=SSE4_2 MKL_CBWR=COMPATIBLE \
	ATEN_CPU_CAPABILITY=default ATEN_CPU_CAPABILITY=avx2
test-cpus: $(VENV)/.stamp-dev
	@for path in $(CPU_PATHS); do \
		echo "test-cpus: $$path: $$(env $$path MKL_VERBOSE=1 $(PY) -c 'import torch; \
			a = torch.ones(8, 8, dtype=torch.float64); a @ a; \
			print("ATen", torch.backends.cpu.get_cpu_capability())' \
			| grep -o 'CNR:[A-Z0-9_]*\|ATen .*' | tr '\n' ' ')"; \
		env $$path OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2 --dist loadfile -p no:cacheprovider \
			-m "floatcmp and not slow and not gpu" || exit 1; \
	done

# The GPU checks (tests marked gpu: every --device command on CUDA against the CPU result).
# Without CUDA: one line, exit 0. benchmarks/gpu_check.sh runs this and the GPU benchmarks.
test-gpu: $(VENV)/.stamp-dev
	@if $(PY) -c "import sys, torch; sys.exit(not torch.cuda.is_available())"; then \
		OMP_NUM_THREADS=1 $(PY) -m pytest -q -m gpu tests/test_gpu.py; \
	else echo "test-gpu: skipped: no CUDA device here (torch.cuda.is_available() is False)"; fi

# The declared floors, tested: a separate venv with the lowest version of every direct
# dependency that pyproject.toml allows (uv's --resolution lowest-direct), then the CI suite.
# Not in CI (it downloads torch 2.4's CUDA build, ~3 GB); result: docs/errors.md "Floors".
MIN_VENV ?= .venv-min
test-min:
	python3 -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python -m pip install -q uv
	$(MIN_VENV)/bin/uv pip install -q --python $(MIN_VENV)/bin/python \
		--resolution lowest-direct -e '.[dev]'
	$(MIN_VENV)/bin/python -m pip list --format=freeze > $(MIN_VENV)/versions.txt
	OMP_NUM_THREADS=1 $(MIN_VENV)/bin/python -m pytest -q -n 2 --dist loadfile -p no:cacheprovider

reproduce: $(VENV)/.stamp-run
	$(VENV)/bin/hardsoft reproduce --quick --out $(OUT)

reproduce-full: $(VENV)/.stamp-run
	$(VENV)/bin/hardsoft reproduce --full --out $(OUT)

lint: $(VENV)/.stamp-dev
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy
	$(VENV)/bin/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) reports build *.egg-info src/*.egg-info
