# The two commands of the README:
#   make demo   set up, record a real program, render its 3D icicle figure
#   make test   set up, run every test
#   make test-fast   set up, run the unit layer only (tests/unit: no bpy, no recordings)
.PHONY: demo test test-fast setup bench fuzz extension wheel clean
demo:
	bash scripts/demo.sh
test:
	bash scripts/test.sh
test-fast:
	TRACEVIS3D_SKIP_SMOKE52=1 bash scripts/test.sh tests/unit
setup:
	bash scripts/setup.sh
# the benches run the kernels a wheel installs on this machine: the highest x86-64 level it runs
# (tools/kernel_caches.py --cpu best; compiled once into build/kernel-cache/, ~5 min)
BENCH_ENV = NUMBA_CACHE_DIR=$(CURDIR)/build/bench-cache
bench: setup
	.venv/bin/python tools/kernel_caches.py --seed build/bench-cache --cpu best
	.venv/bin/python bench/bench_responsive.py
	.venv/bin/python bench/bench_responsive.py --fresh-user
	$(BENCH_ENV) .venv/bin/python bench/bench_load.py
	.venv/bin/python bench/bench_json_load.py --make-10m --record
	$(BENCH_ENV) .venv/bin/python bench/bench_text_load.py
	$(BENCH_ENV) .venv/bin/python bench/bench_compare.py
	$(BENCH_ENV) .venv/bin/python bench/bench_compare_goal.py --goal
	$(BENCH_ENV) .venv/bin/python bench/bench_scale.py --overview --huge
	$(BENCH_ENV) .venv/bin/python bench/bench_synthetic.py
	$(BENCH_ENV) .venv/bin/python bench/bench_threads.py
	$(BENCH_ENV) .venv/bin/python bench/bench_regex.py
fuzz: setup  # a long seeded run of the hostile-input fuzzer (not in CI; TV3D_FUZZ_SEEDS=N runs N)
	.venv/bin/python tests/support/fuzz_hostile.py --seeds $${TV3D_FUZZ_SEEDS:-2000}
extension: setup
	.venv/bin/python tools/build_extension.py
wheel: setup  # dist/tracevis3d-<version>-py3-none-any.whl with the pre-built kernels (tools/kernel_caches.py, as the zip)
	.venv/bin/python tools/build_wheel.py
clean:
	rm -rf build dist out
