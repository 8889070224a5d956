# The two commands of the README: `make reproduce` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install -q -c constraints.txt
OUT ?= reports/

.PHONY: test reproduce reproduce-full lint bench clean

$(VENV)/.stamp-run: pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PIP) -e .
	touch $@

$(VENV)/.stamp-dev: $(VENV)/.stamp-run
	$(PIP) -e '.[dev,interop,notebook,sweep]'
	touch $@

# One torch thread per xdist worker: 2 workers x 2 threads on 2 cores ran 10-80x slower.
test: $(VENV)/.stamp-dev
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2 --dist loadfile

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
