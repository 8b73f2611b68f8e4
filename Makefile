# Makefile: builds worldgen, installs its Debian packages, runs its tests.
#
#   make deps     install every Debian package worldgen needs (as root; safe to repeat)
#   make          build ./worldgen
#   make run      build and make the default world
#   make test     build and run the test suite (SAN=1: with ASan and UBSan)
#   make clean    remove what the build made

VERSION := 0.1.0

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

# OpenMP: the openmp backend (and nothing else) is built with it; linking
# with it brings in libgomp.  OPENMP= (empty) builds without: the backend then
# says it is not available.
OPENMP  ?= -fopenmp
LDFLAGS += $(OPENMP)

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

PKGS := libpng zlib
HAVE_VULKAN := $(shell pkg-config --exists vulkan && command -v glslc >/dev/null && echo 1)
HAVE_SDL2   := $(shell pkg-config --exists sdl2 && echo 1)
ifeq ($(HAVE_VULKAN),1)
PKGS   += vulkan
CFLAGS += -DWG_HAVE_VULKAN
endif
CFLAGS += $(shell pkg-config --cflags $(PKGS))
LDLIBS += $(shell pkg-config --libs $(PKGS))
# SDL2: its headers at build time; the library is dlopen()ed by --show
# alone (render/window.c says why).
ifeq ($(HAVE_SDL2),1)
SDL_CFLAGS := -DWG_HAVE_SDL2 $(shell pkg-config --cflags sdl2)
CFLAGS += $(SDL_CFLAGS)
LDLIBS += -ldl
endif

LIB_SRC   := $(sort $(wildcard backends/*.c render/*.c))
LIB_OBJ   := $(LIB_SRC:%.c=$(B)/%.o)
TEST_SRC  := $(sort $(wildcard tests/*.c))
TEST_OBJ  := $(TEST_SRC:%.c=$(B)/%.o)
SHADERS   := $(wildcard shaders/*.comp)
SPV_INC   := $(if $(HAVE_VULKAN),$(SHADERS:shaders/%.comp=build/shaders/%.spv.inc))

# Debian 12 packages: build tools, the libraries, the Vulkan loader, Mesa's
# lavapipe (Vulkan on the CPU), the validation layer and glslc, SDL2, Xvfb for
# the window test, ImageMagick and valgrind for checks, jq for the JSON test.
DEBS := build-essential pkg-config libpng-dev zlib1g-dev libvulkan-dev \
        mesa-vulkan-drivers vulkan-validationlayers vulkan-tools glslc \
        libsdl2-dev xvfb xauth x11-apps imagemagick valgrind clang jq

.PHONY: all deps run test clean bench fuzz valgrind
# Keep generated files (the embedded shaders) that make would delete as intermediates.
.SECONDARY:
all: worldgen

worldgen: $(B)/worldgen.o $(LIB_OBJ) build/flavour
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)

$(B)/%.o: %.c Makefile | $(SPV_INC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/backends/%.o: backends/%.c Makefile | $(SPV_INC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FIELD_CFLAGS) -c -o $@ $<

# vulkan.c embeds the compiled shaders: rebuild it when one changes.
$(B)/backends/vulkan.o: $(SPV_INC)

$(B)/backends/openmp.o: backends/openmp.c Makefile | $(SPV_INC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FIELD_CFLAGS) $(OPENMP) -c -o $@ $<

# Shaders: GLSL compiled to SPIR-V, as a C initializer list that vulkan.c
# includes, so the binary runs from any directory.
build/shaders/%.spv.inc: shaders/%.comp
	@mkdir -p $(dir $@)
	glslc --target-env=vulkan1.1 -O -mfmt=c -o $@ $<

# The test runner: one suite list made from the WG_TEST() lines.
build/tests/list.inc: $(TEST_SRC)
	@mkdir -p $(dir $@)
	sed -n 's/^WG_TEST(\([a-z0-9_]*\)).*/X(\1)/p' $(TEST_SRC) > $@

$(B)/tests/%.o: tests/%.c build/tests/list.inc Makefile | $(SPV_INC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

tests/run: $(TEST_OBJ) $(LIB_OBJ) build/flavour
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)

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
# FUZZ_SECONDS on the corpus in tests/fuzz/corpus (which it extends).
FUZZ_SECONDS ?= 30
FUZZ_CFLAGS := -g -O1 -std=c11 -D_XOPEN_SOURCE=700 -DWG_VERSION='"$(VERSION)"' \
               -I. -Ibuild -Wno-pass-failed -fsanitize=fuzzer,address,undefined $(filter -DWG_HAVE_%,$(CFLAGS))
build/fuzz/fuzz_options: tests/fuzz/fuzz_options.c worldgen.c $(LIB_SRC) $(SPV_INC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -ffp-contract=off -fopenmp -o $@ tests/fuzz/fuzz_options.c \
	    $(LIB_SRC) $(shell pkg-config --cflags $(PKGS)) $(SDL_CFLAGS) $(LDLIBS)

fuzz: build/fuzz/fuzz_options
	build/fuzz/fuzz_options -max_total_time=$(FUZZ_SECONDS) -max_len=512 \
	    -close_fd_mask=2 -print_final_stats=1 tests/fuzz/corpus

deps:
	@missing=$$(for p in $(DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
	  grep -q '^install ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "deps: all installed"; else \
	  echo "deps: installing" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends $$missing; \
	fi

clean:
	rm -rf build worldgen tests/run

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(B)/worldgen.d
