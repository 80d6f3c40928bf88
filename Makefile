# shoectl — quick start: `make run`, `make test`. Both work on a fresh machine with Python 3.11 and make.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test bench soak traceability docs clean venv

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

## run: set up and run the main job on the embedded defaults (one shoe; ARGS="..." for more)
ARGS ?= --shoes 1
run: $(STAMP)
	$(VENV)/bin/shoectl run $(ARGS)

## test: set up and run the whole test suite (two workers per CPU, each given whole modules, the
## modules with slow tests first: tests/conftest.py)
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): each
# worker would otherwise compile every module again (about 13 s of CPU a run; __pycache__ is ignored by git).
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n auto --dist loadscope --no-loadscope-reorder

## bench: performance figures (not pass/fail)
bench: $(STAMP)
	$(PY) -m benchmarks

## soak: the long hardening runs, not part of `make test` (docs/hardening.md): 10 million fuzzed
## protocol inputs on 2 cores, 100 SIGKILLs of `shoectl run` against an external emulator and 30
## against an automatic shoe, then `shoectl run` under mixes of faults with unplugged lines, at
## several seeds, and under 40 mixes drawn at random
SOAK_INPUTS ?= 10000000
SOAK_KILLS  ?= 100
SOAK_AUTOSHOE_KILLS ?= 30
SOAK_FAULT_SEEDS ?= 3
SOAK_RANDOM_MIXES ?= 40
soak: $(STAMP)
	$(PY) -m benchmarks.soak_protocol --inputs $(SOAK_INPUTS)
	$(PY) -m benchmarks.soak_crash --kills $(SOAK_KILLS)
	$(PY) -m benchmarks.soak_crash --kills $(SOAK_AUTOSHOE_KILLS) --seed 2 --shoe-profile emulated-autoshoe
	$(PY) -m benchmarks.soak_faults --seeds $(SOAK_FAULT_SEEDS)
	$(PY) -m benchmarks.soak_faults --random $(SOAK_RANDOM_MIXES) --seeds 1

## traceability: regenerate docs/traceability.md from the tests' reg markers
traceability: $(STAMP)
	$(PY) tools/traceability.py --write

## docs: regenerate the generated parts of the tree (traceability, the operator command reference,
## the state machine's page, the odds tables shipped in controller/rules/tables/)
docs: traceability
	$(PY) tools/commands_doc.py
	$(VENV)/bin/shoectl diagram --doc -o docs/state-machine.md
	$(PY) tools/shipped_odds_tables.py --write

## clean: remove the virtual environment, build output and test caches. Never a journal: var/
## (journals, their anchors and logs, operators files) is kept; README, "Starting a table afresh".
clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
	@echo "make clean removed: $(VENV) build *.egg-info .pytest_cache .hypothesis"
	@echo "make clean kept: var/ (journals, anchors, logs, operators files); make never deletes a journal"
	@echo "to start a table afresh, move its journal aside: see README.md, \"Starting a table afresh\""
