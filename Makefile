# Makefile: builds worldgen, installs its Debian packages, runs its tests.
#
#   make deps     install every Debian package worldgen needs (as root; safe to repeat)
#   make          build ./worldgen
#   make run      build and make the default world
#   make test     build and run the test suite (SAN=1: with ASan and UBSan)
#   make AVX512=0 build the OpenMP kernels without AVX-512 (to measure AVX2)
#   make clean    remove what the build made
#
# 'make deps run' (or deps with any other goal) installs first and then
# builds with what it installed.  The build follows its configuration: the
# libraries found here (build/config.mk) and the compiler and flags
# (build/obj/flags, build/san/flags).  When one changes, what it affects is
# rebuilt; nothing built under another configuration is reused.

VERSION := 0.1.0
.DEFAULT_GOAL := all

CC      ?= cc
OPT     ?= -O2
CFLAGS  ?= -g
CFLAGS  += $(OPT) -pthread -std=c11 -D_XOPEN_SOURCE=700 -DWG_VERSION='"$(VERSION)"' \
           -I. -Ibuild -Wall -Wextra -Wshadow -Wstrict-prototypes -MMD -MP
LDLIBS  += -lm -pthread

# Warnings are errors in CI (CI=true there) and whenever WERROR=1.
ifneq ($(filter true 1,$(CI) $(WERROR)),)
CFLAGS  += -Werror
endif

# The field stages: SPEC.md pins their arithmetic to binary32 in the order
# written, so no FMA contraction and never -ffast-math.  -fno-math-errno and
# -fno-trapping-math change no result (they only drop errno and FP-exception
# bookkeeping) and let the compiler vectorise the selects and sqrt:
# erosion at 512 goes from 57 ms to 10 ms on the 2-core CI machine.
# -fopenmp-simd honours '#pragma omp simd' (and nothing else of OpenMP) in
# every field file.  -fno-tree-pre: gcc 12's partial redundancy elimination
# carries a neighbour's load from one x to the next as a loop-carried value,
# which stops the hydraulic row loops from vectorising (60 ns a cell-step
# scalar against 9); terrain and erosion time the same without it.
FIELD_CFLAGS := -O3 -fopenmp-simd -fno-tree-pre -ffp-contract=off -fno-math-errno -fno-trapping-math

# AVX512=0: the OpenMP kernels without their AVX-512 builds, so that a CPU
# with AVX-512 runs the AVX2 ones, as a CPU without it does (to measure
# them there; openmp_stage.h's OPENMP_CLONES).
ifeq ($(AVX512),0)
FIELD_CFLAGS += -DWG_NO_AVX512
endif

# OpenMP: the openmp backend (and nothing else) is built with it; linking
# with it brings in libgomp.  OPENMP= (empty) builds without: the backend then
# says it is not available.
OPENMP  ?= -fopenmp
# libgomp is linked in statically, so that its constructor (which reads
# OMP_WAIT_POLICY once) runs after openmp_team.c's, which sets worldgen's
# default wait policy (openmp_team.c says why); a shared libgomp
# initialises before any code of the executable can run.
comma := ,
OPENMP_LIBS := $(if $(OPENMP),-Wl$(comma)--push-state$(comma)-Bstatic -lgomp -Wl$(comma)--pop-state)
LDLIBS_LINK = $(OPENMP_LIBS) $(LDLIBS)

# SAN=1: AddressSanitizer and UndefinedBehaviorSanitizer.  Sanitized objects
# live in their own folder; build/flavour records which kind ./worldgen and
# tests/run were last linked from, so switching relinks them.
ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
B       := build/san
FLAVOUR := san
else
B       := build/obj
FLAVOUR := plain
endif
$(shell mkdir -p build; [ "$$(cat build/flavour 2>/dev/null)" = "$(FLAVOUR)" ] || echo $(FLAVOUR) > build/flavour)

# The libraries found here: build/config.mk sets HAVE_VULKAN (vulkan.pc and
# glslc), HAVE_SDL2 and the pkg-config flags.  A rule finds them, not a
# $(shell) while make reads this file: in 'make deps run' that reading
# happens before deps has installed anything.  The rule runs on every make
# (FORCE), after deps-install when deps is a goal, and rewrites the file only
# when what it found changed; GNU make re-reads its makefiles when an
# included one was rewritten, so the goals are then built with the new
# answer.  Not under -n, which would otherwise install the packages (make
# runs what remakes an included makefile even then).  Goals that build
# nothing (clean, deps alone) skip it.  'include', not '-include': when
# deps-install fails while it remakes the file, make stops there and names
# that rule, where '-include' went on to say "No rule to make target
# 'deps-install'", hiding the real failure.
ifneq ($(filter-out clean deps deps-install,$(or $(MAKECMDGOALS),all)),)
include build/config.mk
endif
build/config.mk: FORCE $(if $(findstring n,$(firstword -$(MAKEFLAGS))),,$(if $(filter deps,$(MAKECMDGOALS)),deps-install))
	@mkdir -p $(dir $@)
	@vk=; sdl=; tif=; pkgs="libpng zlib"; say="without Vulkan (make deps installs libvulkan-dev and glslc)"; \
	if pkg-config --exists vulkan 2>/dev/null && command -v glslc >/dev/null; then \
	  vk=1; pkgs="$$pkgs vulkan"; say="with Vulkan"; fi; \
	if pkg-config --exists sdl2 2>/dev/null; then sdl=1; say="$$say, with SDL2"; fi; \
	if pkg-config --exists libtiff-4 2>/dev/null && [ -f /usr/include/geotiff/geotiffio.h ]; then \
	  tif=1; pkgs="$$pkgs libtiff-4"; say="$$say, with GeoTIFF"; \
	else say="$$say, without GeoTIFF (make deps installs libtiff-dev and libgeotiff-dev)"; fi; \
	{ echo "# What the Makefile found here (made by its build/config.mk rule)."; \
	  echo "HAVE_VULKAN := $$vk"; \
	  echo "HAVE_SDL2 := $$sdl"; \
	  echo "HAVE_GEOTIFF := $$tif"; \
	  echo "PKG_CFLAGS := $$(pkg-config --cflags $$pkgs)"; \
	  echo "PKG_LIBS := $$(pkg-config --libs $$pkgs)"; \
	  echo "SDL2_CFLAGS := $${sdl:+$$(pkg-config --cflags sdl2)}"; } > $@.new || exit 1; \
	if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; \
	  echo "config: building $$say"; \
	fi

ifeq ($(HAVE_VULKAN),1)
CFLAGS += -DWG_HAVE_VULKAN
endif
# libtiff and libgeotiff (libgeotiff has no .pc on Debian 12: its header
# is looked for): the GeoTIFF height maps.  libgeotiff is dlopen()ed by the
# first GeoTIFF written (render/geotiff.c says why), not linked.
ifeq ($(HAVE_GEOTIFF),1)
CFLAGS += -DWG_HAVE_GEOTIFF
LDLIBS += -ldl
endif
CFLAGS += $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS)
# SDL2: its headers at build time; the library is dlopen()ed by --show
# alone (render/window.c says why).
ifeq ($(HAVE_SDL2),1)
SDL_CFLAGS := -DWG_HAVE_SDL2 $(SDL2_CFLAGS)
CFLAGS += $(SDL_CFLAGS)
LDLIBS += -ldl
endif

# The compiler and every flag an object or a link is made with, recorded in
# $(B)/flags: every object and both programs depend on it, and it is
# rewritten when what make is about to build with differs from it, so a new
# compiler, OPT=, CFLAGS=, OPENMP= or a library found (or lost) rebuilds
# the objects and relinks ./worldgen and tests/run.  Left alone otherwise,
# so that a make with nothing to do does nothing.
BUILD_FLAGS := $(shell $(CC) --version 2>/dev/null | head -n 1) | $(CC) $(CFLAGS) | \
               $(FIELD_CFLAGS) | $(OPENMP) | $(LDFLAGS) | $(LDLIBS_LINK)
ifneq ($(file <$(B)/flags),$(BUILD_FLAGS))
$(B)/flags: FORCE
endif
$(B)/flags:
	@mkdir -p $(dir $@)
	@printf '%s\n' '$(subst ','\'',$(BUILD_FLAGS))' > $@

LIB_SRC   := $(sort $(wildcard backends/*.c render/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(B)/%.o)
# The command line (options.c) and the messages (say.c): worldgen.c's main
# runs them, and the fuzz target links them without it.
CLI_SRC   := options.c say.c
CLI_OBJ   := $(CLI_SRC:%.c=$(B)/%.o)
TEST_SRC  := $(sort $(wildcard tests/*.c))
TEST_OBJ  := $(TEST_SRC:%.c=$(B)/%.o)
SHADERS   := $(wildcard shaders/*.comp)
SPV_INC   := $(if $(HAVE_VULKAN),$(SHADERS:shaders/%.comp=build/shaders/%.spv.inc))

# Debian 12 packages: build tools, the libraries, the Vulkan loader, Mesa's
# lavapipe (Vulkan on the CPU), the validation layer and glslc, SDL2, Xvfb for
# the window test, ImageMagick and valgrind for checks, jq for the JSON test,
# Node.js for the glTF validator (deps-install adds npm and the validator),
# libtiff and libgeotiff for GeoTIFF maps, GDAL's tools, which the tests
# open every map worldgen writes with, and the engines scripts/tiles runs
# on: GNU parallel, and Slurm with munge (the test starts a one-node cluster),
# and time(1) for their peak memory per tile; Blender 3.4, which the tests
# import the OBJ and the GLB into, headless, and assimp's command line tool
# (assimp-utils), the library many engines load meshes with; python3, which the tests
# read JSON with and scripts/spec_reference.py runs on; locales, whose
# localedef makes the comma-decimal locale the tests run the figures in
# (a fresh Debian 12 has none, and those tests were skipped).
DEBS := build-essential pkg-config libpng-dev zlib1g-dev libvulkan-dev \
        mesa-vulkan-drivers vulkan-validationlayers vulkan-tools glslc \
        libsdl2-dev xvfb xauth x11-apps xdotool imagemagick valgrind clang jq nodejs locales \
        libtiff-dev libgeotiff-dev gdal-bin parallel slurm-wlm munge time \
        blender assimp-utils python3

.PHONY: all deps deps-install run test clean bench fuzz valgrind FORCE
# Keep generated files (the embedded shaders) that make would delete as intermediates.
.SECONDARY:
all: worldgen

# Sanitized builds link tests/san/keep_drivers.c into worldgen too: it keeps
# every library loaded at run time (the Vulkan driver, SDL's X libraries)
# until LeakSanitizer's exit check (the file says why).
SAN_OBJ := $(if $(filter 1,$(SAN)),$(B)/tests/san/keep_drivers.o)
worldgen: $(B)/worldgen.o $(CLI_OBJ) $(LIB_OBJ) $(SAN_OBJ) build/flavour $(B)/flags
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS_LINK)

$(B)/%.o: %.c Makefile $(B)/flags | $(SPV_INC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/backends/%.o: backends/%.c Makefile $(B)/flags | $(SPV_INC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FIELD_CFLAGS) -c -o $@ $<

# The rasteriser's rows of vertices (raster_row) vectorise only at -O3
# and without trapping math, which lets gcc turn their selects into blends;
# neither changes what an operation rounds to, and the picture is the same.
$(B)/render/raster.o: CFLAGS += -O3 -fno-trapping-math
# The same for the ground with the water shown on it (render_top_inner).
$(B)/render/render.o: CFLAGS += -O3 -fno-trapping-math
# The shading and the materials: -O3, and no errno from libm (sqrtf
# becomes one instruction): shade 16.9 to 15.8 ms at 512 with --aa 2,
# medians of 11 in turn, the picture the same to the byte.  (An AVX2 build
# of them measured the same as SSE2: a point's shading is scalar work.)
$(B)/render/shade.o: CFLAGS += -O3 -fno-trapping-math -fno-math-errno
$(B)/render/material.o: CFLAGS += -O3 -fno-trapping-math -fno-math-errno
# The wide paths (render.h, WG_WIDE) give each lane what the scalar code
# gives: no fused multiply-adds in either (gcc's -std=c11 has none; clang
# would fuse the scalar a * b + c where the target has FMA, and not the
# intrinsics).
$(B)/render/raster.o $(B)/render/render.o $(B)/render/shade.o $(B)/render/material.o: CFLAGS += -ffp-contract=off

# vulkan.c embeds the compiled shaders: rebuild it when one changes.
$(B)/backends/vulkan.o: $(SPV_INC)

# The openmp backend's files (backends/openmp*.c), the only ones built with
# OpenMP (see OPENMP above).
$(filter $(B)/backends/openmp%.o,$(LIB_OBJ)): FIELD_CFLAGS += $(OPENMP)

# Shaders: GLSL compiled to SPIR-V, as a C initializer list that vulkan.c
# includes, so the binary runs from any directory.
build/shaders/%.spv.inc: shaders/%.comp
	@mkdir -p $(dir $@)
	glslc --target-env=vulkan1.1 -O -mfmt=c -o $@ $<

# The test runner: one suite list made from the WG_TEST() lines.
build/tests/list.inc: $(TEST_SRC)
	@mkdir -p $(dir $@)
	sed -n 's/^WG_TEST(\([a-z0-9_]*\)).*/X(\1)/p' $(TEST_SRC) > $@

$(B)/tests/%.o: tests/%.c build/tests/list.inc Makefile $(B)/flags | $(SPV_INC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

tests/run: $(TEST_OBJ) $(LIB_OBJ) $(SAN_OBJ) build/flavour $(B)/flags
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS_LINK)

# Under SAN=1, LeakSanitizer skips what the libraries keep (tests/lsan.supp).
SAN_ENV := $(if $(filter 1,$(SAN)),LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0)
test: worldgen tests/run
	$(SAN_ENV) ./tests/run

run: worldgen
	./worldgen --histogram

bench: worldgen
	scripts/bench.sh

# A small world on every backend available here under valgrind: no errors,
# no definite or indirect leaks (libgomp's and the Vulkan driver's threads
# keep 'possibly lost' stacks until exit, which are not ours to free).
VALGRIND := valgrind -q --error-exitcode=9 --leak-check=full --suppressions=tests/valgrind.supp \
            --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
VALGRIND_RUN := --size 33 --octaves 5 --erosion 3 -q --histogram --width 160 --height 120
valgrind: worldgen
	@mkdir -p build/valgrind
	@for b in scalar openmp vulkan; do \
	  if ./worldgen --size 2 --mesh $$b -q 2>/dev/null; then \
	    echo "valgrind: $$b"; \
	    $(VALGRIND) ./worldgen $(VALGRIND_RUN) --mesh $$b \
	      --heightmap build/valgrind/$$b.png --json build/valgrind/$$b.json \
	      --out build/valgrind/$$b-world.png --obj build/valgrind/$$b.obj >/dev/null || exit 1; \
	  else echo "valgrind: $$b is not available here, skipped"; fi; \
	done
	@echo "valgrind: --mesh all"; $(VALGRIND) ./worldgen $(VALGRIND_RUN) --mesh all --check \
	    --out build/valgrind/all.png >/dev/null

# The option parser under libFuzzer (clang), with ASan and UBSan, for
# FUZZ_SECONDS from the seeds in tests/fuzz/corpus; the inputs it finds go
# to build/fuzz/corpus (the first folder named), which later runs start
# from too, so that a run leaves the source tree as it found it (it had
# added a thousand files to tests/fuzz/corpus).
FUZZ_SECONDS ?= 30
FUZZ_CFLAGS := -g -O1 -std=c11 -D_XOPEN_SOURCE=700 -DWG_VERSION='"$(VERSION)"' \
               -I. -Ibuild -Wno-pass-failed -fsanitize=fuzzer,address,undefined $(filter -DWG_HAVE_%,$(CFLAGS))
# --list-devices loads the Vulkan driver, whose leak LeakSanitizer would
# report for every input that lists: the target keeps the driver loaded
# (tests/san/keep_drivers.c) and the run skips what tests/lsan.supp names.
build/fuzz/fuzz_options: tests/fuzz/fuzz_options.c tests/san/keep_drivers.c $(CLI_SRC) $(CLI_SRC:.c=.h) $(LIB_SRC) $(SPV_INC) Makefile build/config.mk
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -ffp-contract=off -fopenmp -o $@ tests/fuzz/fuzz_options.c \
	    tests/san/keep_drivers.c $(CLI_SRC) $(LIB_SRC) $(PKG_CFLAGS) $(SDL_CFLAGS) $(LDLIBS)

fuzz: build/fuzz/fuzz_options
	@mkdir -p build/fuzz/corpus
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	    build/fuzz/fuzz_options -max_total_time=$(FUZZ_SECONDS) -max_len=512 \
	    -close_fd_mask=2 -print_final_stats=1 build/fuzz/corpus tests/fuzz/corpus

# deps-install does the work, so that build/config.mk can come after it
# (see there) without make then saying 'Nothing to be done for deps'.
deps: deps-install
	@:
deps-install:
	@missing=$$(for p in $(DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
	  grep -q '^install ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "deps: all installed"; else \
	  echo "deps: installing" $$missing; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends $$missing; } || { \
	  echo "deps: apt-get could not install $$missing (its reason is above)" >&2; \
	  exit 1; }; \
	fi
	@# npm: Debian's package, unless the nodejs installed brings its own
	@# (NodeSource's does, and conflicts with Debian's npm).
	@command -v npm >/dev/null || { echo "deps: installing npm"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends npm; } || { \
	  echo "deps: apt-get could not install npm (its reason is above)" >&2; \
	  exit 1; }; }
	@# The Khronos glTF validator, for tests/gltf_validate.js, under build/npm.
	@v=2.0.0-dev.3.10; \
	if grep -qs "\"version\": \"$$v\"" build/npm/node_modules/gltf-validator/package.json; then \
	  echo "deps: gltf-validator installed"; else \
	  echo "deps: installing gltf-validator $$v (npm, under build/npm)"; \
	  { mkdir -p build/npm && npm install --prefix build/npm --loglevel=error \
	    --no-audit --no-fund --save-exact gltf-validator@$$v; } || { \
	  echo "deps: npm could not install gltf-validator $$v from" \
	    "$$(npm config get registry) (its reason is above; behind a proxy" \
	    "that signs with its own CA, give npm that CA: npm config set cafile FILE," \
	    "or NODE_EXTRA_CA_CERTS=FILE); the glTF tests need it" >&2; exit 1; }; \
	fi

clean:
	rm -rf build worldgen tests/run

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(B)/worldgen.d
